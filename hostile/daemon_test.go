package hostile

import (
	"flag"
	"os"
	"testing"

	"github.com/queryd/queryd/internal/testkit"
	"github.com/queryd/queryd/internal/testkit/querydtest"
	"github.com/queryd/queryd/protocols"
)

var (
	flagRace = flag.Bool("hostile.race", true, "build the daemon with the race detector (false: measure RSS without its shadow memory)")
	flagBin  = flag.String("hostile.bin", "", "use this queryd binary instead of building one (with -hostile.race=false if it is not race-enabled)")
)

// querydBin is the daemon binary the tests run: -hostile.bin, or
// cmd/queryd built once before the tests (race-enabled unless
// -hostile.race=false).
var querydBin string

// parallel is how many of the tests that mostly wait (t.Parallel: slow
// attacks at one byte a second, namespaces paced far under a CPU, a real
// game server, stale_after timers) run at once; the others, floods and
// latency figures, run one at a time before them.
const parallel = 4

func TestMain(m *testing.M) {
	flag.Parse()
	testkit.SetParallel(parallel)
	os.Exit(querydtest.Main(m, func() (err error) {
		querydBin = *flagBin
		if querydBin == "" {
			querydBin, err = querydtest.Build{Race: *flagRace}.Path()
		}
		return err
	}))
}

// skipShort skips t under -short, saying what makes it slow (floods,
// namespaces, real servers and the other tests over about 2 s skip; the
// rest cover the suite's logic in a quick run).
func skipShort(t testing.TB, what string) {
	t.Helper()
	if testing.Short() {
		t.Skip(what + ": -short")
	}
}

// Daemon is one queryd process of the harness (internal/testkit/querydtest).
type Daemon = querydtest.Daemon

// Tables are TOML tables by name; a key set to nil is removed.
type Tables = querydtest.Tables

// Metrics is one scrape of /metrics.
type Metrics = querydtest.Metrics

// baseTables is the config every test daemon starts from (on the
// harness's own: loopback ports, the feed socket): every protocol module
// on, the default budgets, and baseServer, but for the relay's pass limit
// on getchallenge ([quake3] pass_rate, pass_source_rate): the relay tests
// flood stand-in game servers with getchallenge to measure the session
// caps, and the limit would hold those datagrams before any session.
// TestRelayQuake3PollKept tests the limit at its defaults (a key set to
// nil is removed).
func baseTables() Tables {
	tables := Tables{"server": baseServer()}
	for _, m := range protocols.List() {
		tables[m.Name()] = map[string]any{"enabled": true}
	}
	tables["quake3"]["pass_rate"] = 0.0
	tables["quake3"]["pass_source_rate"] = 0.0
	return tables
}

// baseServer is the [server] document of every test daemon.
func baseServer() map[string]any {
	return map[string]any{
		"name": "hostile test", "map": "arena", "game": "Hostile", "folder": "hostile",
		"version": "1.0.0", "max_players": 16,
		"players": map[string]any{
			"1": map[string]any{"name": "Alice", "score": 3, "ping": 40},
			"2": map[string]any{"name": "Bob", "score": 5, "ping": 60},
		},
		"rules": map[string]any{"mp_timelimit": "30"},
	}
}

// newDaemon prepares a daemon (ports, paths, config file: baseTables with
// over on top) without starting it. WriteConfig writes another config:
// pass baseTables() first.
func newDaemon(t testing.TB, over Tables) *Daemon {
	t.Helper()
	return querydtest.New(t, querydBin, baseTables(), over)
}

// StartDaemon starts queryd on the base config with over laid on top, waits
// until it is ready, and stops it (asserting a clean exit) when t ends.
func StartDaemon(t testing.TB, over Tables) *Daemon {
	t.Helper()
	d := newDaemon(t, over)
	d.Start(t)
	return d
}
