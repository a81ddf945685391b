package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/queryd/queryd/internal/testkit/querydtest"
	"github.com/queryd/queryd/protocols"
)

// querydBin is the race-enabled daemon binary TestMain builds once.
var querydBin string

// Protocols are the protocol tables a test config can enable: every module
// of the registration list. Every one a test does not list in
// Options.Protocols is written with enabled = false.
var Protocols = protocols.Names()

func TestMain(m *testing.M) {
	os.Exit(querydtest.Main(m, func() (err error) {
		querydBin, err = querydtest.RaceBuild.Path()
		return err
	}))
}

// Options choose what a test daemon serves. The zero value serves nothing
// but the feed: list the protocols a test needs.
type Options struct {
	// Protocols maps each protocol table to enable ("a2s", "gamespy4", "sagl",
	// "quake3") to its keys besides enabled (nil for none). A key may hold
	// a []map[string]any for an array of tables, e.g. quake3's "masters".
	Protocols map[string]map[string]any
	// Tables holds keys of any other table ("limits", "feed", "relay", …),
	// laid over the harness's own; a key set to nil removes it.
	Tables map[string]map[string]any
	// Server is the [server] base document; nil writes a small one.
	Server map[string]any
	// Netns, when set, runs the daemon in that network namespace (ip
	// netns exec); its admin endpoint is reached from inside it.
	Netns string
	// UDPAddr is the [listen] udp address; "" takes a free port on
	// 127.0.0.1.
	UDPAddr string
}

// Daemon is one queryd subprocess of the harness
// (internal/testkit/querydtest), on free loopback ports.
type Daemon struct {
	*querydtest.Daemon
	UDPPort int // UDPAddr's port
}

// StartDaemon writes a config for opts, starts queryd on it, waits until it
// is ready, and stops it (asserting a clean exit) when t ends.
func StartDaemon(t testing.TB, opts Options) *Daemon {
	t.Helper()
	d := querydtest.New(t, querydBin)
	if opts.UDPAddr != "" {
		d.UDPAddr = opts.UDPAddr
	}
	ap, err := netip.ParseAddrPort(d.UDPAddr)
	if err != nil {
		t.Fatalf("Options.UDPAddr: %v", err)
	}
	d.Netns = opts.Netns
	d.WriteConfig(t, configTables(opts))
	d.Start(t)
	return &Daemon{Daemon: d, UDPPort: int(ap.Port())}
}

// configTables are the tables of opts on the harness's base: one socket
// worker, generous budgets (tests share 127.0.0.1), the protocols opts
// lists on and the others off.
func configTables(opts Options) querydtest.Tables {
	tables := querydtest.Tables{
		"listen": {"workers": 1},
		"limits": {
			"per_ip_rate": "64MiB", "per_ip_burst": "16MiB",
			"unproven_rate": "64MiB", "unproven_burst": "16MiB",
		},
	}
	for _, p := range Protocols {
		tables[p] = map[string]any{"enabled": false}
	}
	for p, keys := range opts.Protocols {
		tables[p] = map[string]any{"enabled": true}
		for k, v := range keys {
			tables[p][k] = v
		}
	}
	server := opts.Server
	if server == nil {
		server = map[string]any{"name": "queryd interop", "map": "interop_map", "max_players": 8}
	}
	tables["server"] = server
	return tables.Over(querydtest.Tables(opts.Tables))
}

// CmdResult is what an external command did.
type CmdResult struct {
	Stdout, Stderr string
	Err            error // nil on exit status 0
}

// RunCmd runs an external command with a time limit, from dir ("" for the
// test's directory), and logs its command line and stderr.
func RunCmd(t testing.TB, limit time.Duration, dir, name string, args ...string) CmdResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Stdin = nil
	cmd.WaitDelay = time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	t.Logf("running %s %s", name, strings.Join(args, " "))
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("%s: no exit within %v: %w", name, limit, ctx.Err())
	} else if err != nil {
		err = fmt.Errorf("%s: %w", name, err)
	}
	if s := strings.TrimSpace(stderr.String()); s != "" {
		t.Logf("%s stderr:\n%s", name, s)
	}
	return CmdResult{Stdout: stdout.String(), Stderr: stderr.String(), Err: err}
}

// NeedCommand fails the test (it never skips: a missing client is a broken
// setup) when name is not on PATH; .ci/run installs the clients.
func NeedCommand(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s is not installed (.ci/run installs it): %v", name, err)
	}
	return p
}

// nodeDir is the Node project with the npm clients (npm ci installs them).
const nodeDir = "node"

// RunNode runs node on a script in interop/node with a time limit.
func RunNode(t testing.TB, limit time.Duration, script string, args ...string) CmdResult {
	t.Helper()
	NeedCommand(t, "node")
	if _, err := os.Stat(filepath.Join(nodeDir, "node_modules")); err != nil {
		t.Fatalf("interop/node/node_modules is missing: run `npm ci` in interop/node (.ci/run does): %v", err)
	}
	return RunCmd(t, limit, nodeDir, "node", append([]string{script}, args...)...)
}

// RunGamedig asks the server with gamedig (interop/node/gamedig.mjs) and
// returns its JSON result. typ is a gamedig game id or protocol name;
// options (may be nil) are merged over the script's defaults.
func RunGamedig(t testing.TB, typ, addr string, options map[string]any) CmdResult {
	t.Helper()
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("gamedig address %q: %v", addr, err)
	}
	args := []string{typ, host, port}
	if options != nil {
		b, err := json.Marshal(options)
		if err != nil {
			t.Fatalf("gamedig options: %v", err)
		}
		args = append(args, string(b))
	}
	return RunNode(t, 60*time.Second, "gamedig.mjs", args...)
}
