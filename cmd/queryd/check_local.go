package main

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/feed"
	"github.com/queryd/queryd/responder"
	"github.com/queryd/queryd/xdp"
)

// localFindings are what queryd check found on this host: errors (the start
// would fail), warnings, and a note for people.
type localFindings struct {
	errs     config.Errors
	warnings []string
	note     string
}

// checkLocal checks what the daemon's start needs of this host and a config
// file alone cannot say: the feed socket's folder, that no other process
// serves the socket or holds a UDP or admin address, that the [xdp]
// interfaces exist. A key already in error (known) is not checked again.
// When a running queryd answers on the feed socket (`systemctl reload` runs
// queryd check beside it), the addresses it holds are not reported.
func checkLocal(c *config.Config, known config.Errors) localFindings {
	l, running := checkServerLocal(c, known)
	h := checkHostLocal(c, known, running)
	l.errs, l.warnings = append(l.errs, h.errs...), append(l.warnings, h.warnings...)
	return l
}

// checkServerLocal is checkLocal's part for one server: what the kernel
// makes of its [listen] divert (checkDivertKernel), its feed socket and
// the addresses it binds ([listen] udp, [feed] http and the modules' own,
// such as [sagl] http); running reports that a running queryd answers on its
// socket (its addresses are then not checked).
func checkServerLocal(c *config.Config, known config.Errors) (l localFindings, running bool) {
	add := func(key, format string, args ...any) {
		if !known.Covers(key) {
			l.errs.Add(key, format, args...)
		}
	}
	if !known.Covers("listen.divert") {
		release, k, ok := xdp.HostKernel()
		errs, warnings := checkDivertKernel(c, release, k, ok)
		l.errs, l.warnings = append(l.errs, errs...), append(l.warnings, warnings...)
	}
	if !known.Covers("feed.socket") {
		running = l.checkSocket(c, add)
	}
	if running {
		l.note = "a running queryd answers on the feed socket: the addresses it holds are not checked (a reload is fine; a second queryd on this config could not start)"
		return l, true
	}
	for _, b := range c.Binds() {
		if strings.HasPrefix(b.Key, "listen.divert") {
			continue // the stock game server's own address: it holds it
		}
		if why := bindFails(b.Network, b.Addr); why != "" {
			add(b.Key, "%s: %s", b.Addr, why)
		}
	}
	l.warnings = append(l.warnings, uringWarnings(c, responder.URingAvailable)...)
	return l, false
}

// uringWarnings warns when c asks for the uring socket layer and probe
// says this host cannot run it: the daemon would serve on the batch layer.
func uringWarnings(c *config.Config, probe func() error) []string {
	if c.Listen.Socket != responder.SocketUring {
		return nil
	}
	if err := probe(); err != nil {
		return []string{fmt.Sprintf("listen.socket: \"uring\" cannot run here (%v): the batch layer would serve", err)}
	}
	return nil
}

// checkHostLocal is checkLocal's host-wide part: the [admin] address (not
// when a running queryd holds it) and the [xdp] interfaces.
func checkHostLocal(c *config.Config, known config.Errors, running bool) localFindings {
	var l localFindings
	if ap := c.Admin.Listen; ap.IsValid() && !running && !known.Covers("admin.listen") {
		if why := bindFails("tcp", ap); why != "" {
			l.errs.Add("admin.listen", "%s: %s", ap, why)
		}
	}
	for i, name := range c.XDP.Interfaces {
		key := fmt.Sprintf("xdp.interfaces[%d]", i)
		if _, err := net.InterfaceByName(name); err != nil && !known.Covers(key) {
			l.warnings = append(l.warnings, fmt.Sprintf("%s: no interface %q on this host: queryd starts without the XDP fast path there", key, name))
		}
	}
	return l
}

// checkSocket checks the feed socket's folder and path; it returns true when
// a running queryd answers on the socket.
func (l *localFindings) checkSocket(c *config.Config, add func(key, format string, args ...any)) bool {
	if c.Feed.Socket == "" {
		return answersLikeQueryd(c.FeedSocket()) // its private folder: made and checked at start
	}
	dir := filepath.Dir(c.Feed.Socket)
	switch fi, err := os.Stat(dir); {
	case errors.Is(err, fs.ErrNotExist) && isRuntimeDir(dir):
		l.warnings = append(l.warnings, fmt.Sprintf("feed.socket: the folder %s does not exist here (yet): systemd's RuntimeDirectory= makes it at start, "+
			"a container has it from its image or a volume; without it queryd cannot start", dir))
		return false
	case errors.Is(err, fs.ErrNotExist):
		add("feed.socket", "the folder %s does not exist: queryd cannot create the socket there (make the folder, or leave socket empty for a private one)", dir)
		return false
	case err != nil:
		add("feed.socket", "%v", err)
		return false
	case !fi.IsDir():
		add("feed.socket", "%s is not a folder", dir)
		return false
	}
	err := feed.CheckSocketPath(c.Feed.Socket)
	if errors.Is(err, feed.ErrServed) && answersLikeQueryd(c.Feed.Socket) {
		return true
	}
	if err != nil {
		add("feed.socket", "%v", err)
	}
	return false
}

// isRuntimeDir reports whether dir is a folder of /run (or /var/run), such
// as the /run/queryd systemd makes for RuntimeDirectory=queryd.
func isRuntimeDir(dir string) bool {
	parent := filepath.Dir(dir)
	return parent == "/run" || parent == "/var/run"
}

// answersLikeQueryd reports whether a queryd feed answers a get on path. A
// get is not feed activity (feed.Activity): looking changes nothing about
// what the running queryd answers (`systemctl reload` runs queryd check
// beside it), where a ping would arm or renew its stale timer.
func answersLikeQueryd(path string) bool {
	cl, err := feed.Dial(path)
	if err != nil {
		return false
	}
	defer cl.Close()
	done := make(chan error, 1)
	go func() { _, _, err := cl.Get(); done <- err }()
	select {
	case err := <-done:
		return err == nil
	case <-time.After(2 * time.Second):
		return false
	}
}

// bindFails binds ap (network "udp" or "tcp") for a moment and says why the
// daemon could not, or "" when it could or the reason may not apply to it: a
// port below 1024 refused here (EACCES) may be the daemon's to take with
// CAP_NET_BIND_SERVICE. Port 0 (any free port) is not checked.
func bindFails(network string, ap netip.AddrPort) string {
	if ap.Port() == 0 {
		return ""
	}
	var err error
	if network == "udp" {
		var c *net.UDPConn
		if c, err = net.ListenUDP("udp", net.UDPAddrFromAddrPort(ap)); err == nil {
			c.Close()
		}
	} else {
		var ln *net.TCPListener
		if ln, err = net.ListenTCP("tcp", net.TCPAddrFromAddrPort(ap)); err == nil {
			ln.Close()
		}
	}
	switch {
	case err == nil, errors.Is(err, syscall.EACCES):
		return ""
	case errors.Is(err, syscall.EADDRINUSE):
		return "in use by another process: queryd cannot start"
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return "not an address of this host: queryd cannot start"
	default:
		return ""
	}
}
