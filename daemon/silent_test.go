package daemon_test

import (
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/queryd/queryd/a2s"
	"github.com/queryd/queryd/daemon"
	"github.com/queryd/queryd/daemon/daemontest"
)

// With [upstream] pointing at a game server that never answers (a UDP
// port that reads and never replies) and a feed that never spoke, every
// path reads the one silence value: the socket path answers nothing,
// /healthz says 503 with reason upstream_unanswered and the daemon's
// start as since, queryd_silent is 1 while queryd_feed_stale is 0, and
// /status.json's silent object names the reason and its upstream card
// the game server.
func TestSilentUpstreamUnanswered(t *testing.T) {
	mute, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer mute.Close()
	start := time.Now()
	d := daemontest.Start(t, []daemon.Module{echoModule{}, a2s.Module{}}, "[upstream]\nprotocol = \"a2s\"\naddress = \""+mute.LocalAddr().String()+"\"\ninterval = \"1s\"\ntimeout = \"200ms\"\n")
	if got := ask(t, d, 300*time.Millisecond); got != "" {
		t.Fatalf("answered %q before the game server ever did", got)
	}
	if s := d.Silence(); !s.Silent || s.Reason != daemon.ReasonUnanswered || s.State != daemon.StateSilent || s.Fed ||
		!s.Causes.Has(daemon.ReasonUnanswered) || s.Causes.Has(daemon.ReasonFeed) ||
		s.Since.Before(start.Add(-time.Second)) || s.Since.After(time.Now()) {
		t.Errorf("Silence: %+v", s)
	}
	res, err := http.Get("http://" + d.AdminAddr() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	var h map[string]any
	json.NewDecoder(res.Body).Decode(&h)
	res.Body.Close()
	if res.StatusCode != http.StatusServiceUnavailable || h["ok"] != false || h["reason"] != "upstream_unanswered" || h["since"] == nil {
		t.Errorf("/healthz: %d %v", res.StatusCode, h)
	}
	if v := d.Metric(t, "queryd_silent", ""); v != 1 {
		t.Errorf("queryd_silent = %v, want 1", v)
	}
	if v := d.Metric(t, "queryd_feed_stale", ""); v != 0 {
		t.Errorf("queryd_feed_stale = %v, want 0 (the feed is no cause)", v)
	}
	deadline := time.Now().Add(3 * time.Second) // the document is made once a second
	for {
		var doc struct {
			Silent struct {
				Silent  bool
				Reason  *string
				Reasons []string
			}
			Upstream *struct {
				Protocol, Address string
				LastError         string `json:"last_error"`
			}
		}
		res, err := http.Get("http://" + d.AdminAddr() + "/status.json")
		if err != nil {
			t.Fatal(err)
		}
		json.NewDecoder(res.Body).Decode(&doc)
		res.Body.Close()
		if doc.Silent.Silent && doc.Silent.Reason != nil && *doc.Silent.Reason == "upstream_unanswered" &&
			doc.Upstream != nil && doc.Upstream.Protocol == "a2s" && doc.Upstream.Address == mute.LocalAddr().String() && strings.Contains(doc.Upstream.LastError, "timeout") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/status.json silent %+v, upstream %+v", doc.Silent, doc.Upstream)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
