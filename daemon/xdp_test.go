package daemon_test

import (
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/daemon/daemontest"
	"github.com/queryd/queryd/internal/testkit"
)

// TestXDPFallback: with [xdp] naming an interface that does not exist,
// queryd starts, logs that the fast path is off with the reason (the
// missing interface as root; without CAP_BPF, as any other user, the
// refused load), and answers on the socket path with the whole of
// [limits].
func TestXDPFallback(t *testing.T) {
	dir := daemontest.Dir(t)
	path := daemontest.WriteConfig(t, dir, "[xdp]\ninterfaces = [\"nosuchif0\"]\n")
	cfg, err := config.Load(path, echoModule{})
	if err != nil {
		t.Fatal(err)
	}
	var logs testkit.Buffer
	d := daemontest.StartLogged(t, mods(echoModule{}), cfg, path, slog.New(slog.NewTextHandler(&logs, nil)))
	t.Cleanup(func() {
		if err := d.Stop(); err != nil {
			t.Errorf("the daemon stopped with an error: %v", err)
		}
	})
	if got := ask(t, d, time.Second); got != "name=config name" {
		t.Fatalf("socket path: %q, want the echo reply", got)
	}
	var line string
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "XDP fast path off: serving on the socket path only") {
			line = l
		}
	}
	if line == "" {
		t.Fatalf("no \"XDP fast path off\" line in the log:\n%s", logs.String())
	}
	reason := "CAP_BPF" // the load is refused first
	if os.Geteuid() == 0 {
		reason = `interface \"nosuchif0\"`
	}
	if !strings.Contains(line, "level=WARN") || !strings.Contains(line, "interfaces=[nosuchif0]") || !strings.Contains(line, reason) {
		t.Fatalf("the fallback line does not give the interface and the reason (%s):\n%s", reason, line)
	}
	if strings.Contains(logs.String(), "XDP fast path on") {
		t.Fatalf("the log says the fast path is on:\n%s", logs.String())
	}
	if n := d.Metric(t, "queryd_xdp_attached", ""); n != 0 {
		t.Fatalf("queryd_xdp_attached = %v with no fast path", n)
	}
	t.Log(line)
}
