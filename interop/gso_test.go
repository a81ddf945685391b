package interop

import (
	"net"
	"runtime"
	"syscall"
	"testing"
)

// udpSegment is UDP_SEGMENT (linux/udp.h): UDP generic segmentation offload.
const udpSegment = 103

// kernelHasUDPSegment reports whether this kernel knows UDP_SEGMENT, so that
// queryd's batch layer sends multi-datagram answers as GSO sends.
func kernelHasUDPSegment(t *testing.T) bool {
	t.Helper()
	if runtime.GOOS != "linux" {
		return false
	}
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		_, serr = syscall.GetsockoptInt(int(fd), syscall.IPPROTO_UDP, udpSegment)
	}); err != nil {
		t.Fatal(err)
	}
	return serr == nil
}

// checkSplitsSentWithGSO: the split replies the real clients have just
// reassembled left queryd as UDP GSO sends (on a kernel that has them), and
// the kernel refused none.
func checkSplitsSentWithGSO(t *testing.T, d *Daemon) {
	if !kernelHasUDPSegment(t) {
		t.Skip("no UDP_SEGMENT on this system: queryd sends split replies datagram by datagram")
	}
	sends := d.Metric(t, `queryd_gso_sends_total{server="main"}`)
	refused := d.Metric(t, `queryd_socket_errors_total{op="gso_refused",server="main"}`)
	t.Logf("GSO sends %v, refused %v", sends, refused)
	if sends < 1 || refused != 0 {
		t.Fatalf("GSO sends %v, refused %v: want the split replies sent as GSO sends, none refused", sends, refused)
	}
}
