package interop

import (
	"strings"
	"testing"
	"time"

	"github.com/queryd/queryd/daemon/daemontest"
)

// TestPageAsleep (issue 41): the status page of a fed server with [sleep]
// (its commands /bin/true) says "Asleep since …" in a banner once it
// sleeps, with its wakes by cause, and the Sleep card its phase; woken by
// the feed, "Waking since …"; once the feeder speaks the banner goes and
// the card counts the wake (headless Chromium).
func TestPageAsleep(t *testing.T) {
	d := daemontest.Start(t, pageMods, "[sleep]\nafter = \"2s\"\nstart = [\"true\"]\nstop = [\"true\"]\n")
	fc := d.Feed(t)
	if _, err := fc.Replace(map[string]any{"name": "Sleepy", "map": "dm1"}); err != nil {
		t.Fatal(err)
	}
	p := openPage(t, d)
	p.waitJS(t, 15*time.Second, `!document.getElementById("asleep-banner").hidden && document.body.dataset.state === "asleep"`)
	banner := eval[string](t, p, `document.getElementById("asleep-banner").textContent`)
	if !strings.HasPrefix(banner, "Asleep since ") || !strings.Contains(banner, "Wakes: 0;") {
		t.Fatalf("asleep banner %q", banner)
	}
	p.waitJS(t, 5*time.Second, `document.getElementById("sleep-phase").textContent.startsWith("asleep")`)
	if _, err := fc.Wake(); err != nil {
		t.Fatal(err)
	}
	p.waitJS(t, 5*time.Second, `document.getElementById("asleep-banner").textContent.startsWith("Waking since ")`)
	if _, err := fc.Ping(); err != nil {
		t.Fatal(err)
	}
	p.waitJS(t, 5*time.Second, `document.getElementById("asleep-banner").hidden`)
	if got := eval[string](t, p, `document.getElementById("sleep-wakes").textContent`); !strings.HasPrefix(got, "1 (feed 1);") {
		t.Fatalf("sleep card wakes %q", got)
	}
	p.checkClean(t)
	t.Logf("banner while asleep: %q", banner)
}
