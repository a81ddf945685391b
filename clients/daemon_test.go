package clients_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/queryd/queryd/internal/testkit"
	"github.com/queryd/queryd/internal/testkit/querydtest"
)

// parallel is how many client tests run at once: each mostly waits (on
// its client's feed, stale_after, a restart, a 3 s freeze); the compiles
// for Windows run one at a time.
const parallel = 4

func TestMain(m *testing.M) {
	flag.Parse()
	testkit.SetParallel(parallel)
	os.Exit(querydtest.Main(m))
}

// daemon is a queryd process of the harness (internal/testkit/querydtest)
// feeding the clients' state over A2S and SAGL, with the HTTP feed on;
// stopped and started again, it keeps its ports.
type daemon struct {
	*querydtest.Daemon
}

// newDaemon prepares the clients' daemon (cmd/queryd built once, without
// the race detector) without starting it.
func newDaemon(t *testing.T) *daemon {
	t.Helper()
	d := querydtest.New(t, querydtest.Build{}.Binary(t))
	token := filepath.Join(d.Dir, "feed.token")
	if err := os.WriteFile(token, []byte(feedToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d.WriteConfig(t, querydtest.Tables{
		"listen": {"workers": 1},
		"feed":   {"stale_after": "4s", "http": d.FeedHTTPAddr, "http_token_file": token},
		"server": {"name": "config name", "map": "config_map", "max_players": 10},
		"a2s":    {"enabled": true},
		"sagl":   {"enabled": true},
	})
	return &daemon{d}
}

// httpAnswers returns how many 200s the HTTP feed has answered since
// queryd started (queryd_feed_http_responses_total{code="200",server="main"}).
func (d *daemon) httpAnswers(t *testing.T) float64 {
	t.Helper()
	return d.Metric(t, `queryd_feed_http_responses_total{code="200",server="main"}`)
}

// env is the examples' environment: where and how to feed.
func (d *daemon) env() []string {
	return []string{
		"QUERYD_FEED_SOCKET=" + d.Socket,
		"QUERYD_FEED_HTTP=http://" + d.FeedHTTPAddr,
		"QUERYD_FEED_TOKEN=" + feedToken,
		"QUERYD_FEED_PING=1",
		"QUERYD_EXAMPLE_SECONDS=120",
	}
}
