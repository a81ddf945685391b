//go:build linux

package netnstest

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The driver statistics of an interface (what `ethtool -S` prints), read
// with the SIOCETHTOOL ioctl: Debian's ethtool is not among the test
// tools, and the veth's XDP_TX drops are only counted there.
const (
	ethtoolGStrings = 0x1b // ETHTOOL_GSTRINGS
	ethtoolGStats   = 0x1d // ETHTOOL_GSTATS
	ethtoolGSsetInf = 0x37 // ETHTOOL_GSSET_INFO
	ethSSStats      = 1    // ETH_SS_STATS
	ethGStringLen   = 32   // ETH_GSTRING_LEN
	maxDriverStats  = 4096 // more than any driver has; a bound on what is read
)

// ifreqData is struct ifreq with its ifr_data member.
type ifreqData struct {
	name [unix.IFNAMSIZ]byte
	data uintptr
	_    [16]byte // the rest of the union
}

// DriverStats returns ifname's driver statistics by name in namespace ns
// ("" for the calling thread's).
func DriverStats(ns, ifname string) (map[string]uint64, error) {
	var out map[string]uint64
	read := func() (err error) {
		out, err = driverStats(ifname)
		return err
	}
	if ns == "" {
		return out, read()
	}
	return out, Do(ns, read)
}

// XDPTxErrors returns the frames the server's end of the veth could not
// pass to the client's with XDP_TX (the client's receive ring was full),
// summed over its queues: replies the program made that the capture
// cannot see.
func (n *Net) XDPTxErrors() (uint64, error) {
	st, err := DriverStats(n.ServerNS, n.ServerIf)
	if err != nil {
		return 0, err
	}
	var sum uint64
	for k, v := range st {
		if strings.HasPrefix(k, "rx_queue_") && strings.HasSuffix(k, "_xdp_tx_errors") {
			sum += v
		}
	}
	return sum, nil
}

func driverStats(ifname string) (map[string]uint64, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("ethtool socket: %w", err)
	}
	defer unix.Close(fd)
	n, err := statsCount(fd, ifname)
	if err != nil {
		return nil, err
	}
	names, err := statNames(fd, ifname, n)
	if err != nil {
		return nil, err
	}
	vals := make([]uint64, 1+n) // cmd and n_stats share the first word
	vals[0] = uint64(ethtoolGStats) | uint64(n)<<32
	if err := ethtool(fd, ifname, unsafe.Pointer(&vals[0])); err != nil {
		return nil, fmt.Errorf("%s: ETHTOOL_GSTATS: %w", ifname, err)
	}
	out := make(map[string]uint64, n)
	for i, name := range names {
		out[name] = vals[1+i]
	}
	return out, nil
}

// statsCount returns how many statistics the driver has.
func statsCount(fd int, ifname string) (int, error) {
	req := &struct { // on the heap, as every buffer ethtool is given: it does not move
		cmd, _ uint32
		mask   uint64
		count  uint32
	}{cmd: ethtoolGSsetInf, mask: 1 << ethSSStats}
	if err := ethtool(fd, ifname, unsafe.Pointer(req)); err != nil {
		return 0, fmt.Errorf("%s: ETHTOOL_GSSET_INFO: %w", ifname, err)
	}
	if req.mask&(1<<ethSSStats) == 0 {
		return 0, nil
	}
	if req.count > maxDriverStats {
		return 0, fmt.Errorf("%s: the driver says it has %d statistics", ifname, req.count)
	}
	return int(req.count), nil
}

// statNames returns the names of the driver's n statistics.
func statNames(fd int, ifname string, n int) ([]string, error) {
	buf := make([]byte, 12+n*ethGStringLen)
	hdr := (*[3]uint32)(unsafe.Pointer(&buf[0]))
	hdr[0], hdr[1], hdr[2] = ethtoolGStrings, ethSSStats, uint32(n)
	if err := ethtool(fd, ifname, unsafe.Pointer(&buf[0])); err != nil {
		return nil, fmt.Errorf("%s: ETHTOOL_GSTRINGS: %w", ifname, err)
	}
	names := make([]string, n)
	for i := range names {
		s := buf[12+i*ethGStringLen : 12+(i+1)*ethGStringLen]
		if z := bytes.IndexByte(s, 0); z >= 0 {
			s = s[:z]
		}
		names[i] = string(s)
	}
	return names, nil
}

// ethtool runs one SIOCETHTOOL command; data is a heap buffer (the
// kernel is given its address inside the ifreq, where the garbage
// collector does not see it).
func ethtool(fd int, ifname string, data unsafe.Pointer) error {
	ifr := new(ifreqData)
	if len(ifname) >= len(ifr.name) {
		return fmt.Errorf("interface name %q too long", ifname)
	}
	copy(ifr.name[:], ifname)
	ifr.data = uintptr(data)
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(ifr)))
	runtime.KeepAlive(data)
	if e != 0 {
		return e
	}
	return nil
}
