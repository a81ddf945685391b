package interop

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/queryd/queryd/daemon/daemontest"
)

// The status page's browser tests (daemon/status's page in a real headless
// Chromium, driven with chromedp). They live in this module so that
// chromedp is a dependency of the interop suite only, not of everyone who
// imports queryd.

// chromium finds Debian's chromium (or $QUERYD_CHROMIUM), or skips t:
// .ci/run installs it, so CI runs these tests.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("QUERYD_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("headless Chromium is not installed (Debian: apt-get install chromium; .ci/run installs it): the status page's browser tests are skipped")
	return ""
}

// browserPage is one tab of a headless Chromium on the status page, with
// what the tab did recorded: every request's URL, dialogs, uncaught
// exceptions and console errors.
type browserPage struct {
	ctx   context.Context
	admin string // host:port of the admin listener

	mu         sync.Mutex
	requests   []string
	dialogs    []string
	exceptions []string
	console    []string
}

// openPage starts a headless Chromium (closed when t ends) and opens the
// status page of d in it. At the end of t it checks that the page asked no
// host but the admin address, opened no dialog and threw nothing.
func openPage(t *testing.T, d *daemontest.Daemon) *browserPage {
	t.Helper()
	return openPageAt(t, d.AdminAddr(), "")
}

// openPageAt is openPage for the admin listener at admin, with Chromium
// run inside the network namespace netns ("": this one).
func openPageAt(t *testing.T, admin, netns string) *browserPage {
	t.Helper()
	exe := chromium(t)
	if netns != "" { // ip execs Chromium inside the namespace
		wrapper := filepath.Join(t.TempDir(), "chromium-in-netns")
		script := "#!/bin/sh\nexec ip netns exec " + netns + " " + exe + " \"$@\"\n"
		if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		exe = wrapper
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Headless,
		chromedp.NoSandbox, // root in CI
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc()
	})
	p := &browserPage{ctx: ctx, admin: admin}
	if err := chromedp.Do(ctx); err != nil { // start the browser and the tab
		t.Fatalf("starting %s: %v", exe, err)
	}
	if err := chromedp.Listen(ctx, p.record); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.checkClean(t) })
	p.run(t, 30*time.Second, chromedp.Navigate("http://"+p.admin+"/"))
	p.waitJS(t, 10*time.Second, `document.body.dataset.version !== undefined || document.body.dataset.view === "servers"`) // one server's page, or a host's list
	return p
}

// record keeps what the tab does (it runs in chromedp's reading loop).
func (p *browserPage) record(ev any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch e := ev.(type) {
	case *network.EventRequestWillBeSent:
		p.requests = append(p.requests, e.Request.URL)
	case *page.EventJavascriptDialogOpening:
		p.dialogs = append(p.dialogs, string(e.Type)+": "+e.Message)
		go chromedp.Call(p.ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
	case *cdpruntime.EventExceptionThrown:
		d := e.ExceptionDetails
		p.exceptions = append(p.exceptions, fmt.Sprintf("%s at %s:%d", d.Text, d.URL, d.LineNumber))
	case *log.EventEntryAdded:
		if e.Entry.Level == log.EntryLevelError && !strings.HasSuffix(e.Entry.URL, "/favicon.ico") {
			p.console = append(p.console, e.Entry.Text+" "+e.Entry.URL)
		}
	}
}

// checkClean fails t if the page asked another host than the admin
// address, opened a dialog, threw or logged an error.
func (p *browserPage) checkClean(t *testing.T) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.requests) == 0 {
		t.Error("no request recorded: the network events were not seen")
	}
	for _, r := range p.requests {
		u, err := url.Parse(r)
		if err != nil || u.Scheme != "http" || u.Host != p.admin {
			t.Errorf("the page asked %q: only http://%s/ may be asked", r, p.admin)
		}
	}
	for _, d := range p.dialogs {
		t.Errorf("the page opened a dialog: %s", d)
	}
	for _, e := range p.exceptions {
		t.Errorf("the page threw: %s", e)
	}
	for _, c := range p.console {
		t.Errorf("the page logged an error: %s", c)
	}
}

// asked returns the paths the page requested so far.
func (p *browserPage) asked() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, r := range p.requests {
		if u, err := url.Parse(r); err == nil {
			out = append(out, u.Path)
		}
	}
	return out
}

// run runs a browser action within limit.
func (p *browserPage) run(t *testing.T, limit time.Duration, a chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, limit)
	defer cancel()
	if err := chromedp.Do(ctx, a); err != nil {
		t.Fatal(err)
	}
}

// eval evaluates a JavaScript expression in the page into out's type.
func eval[T any](t *testing.T, p *browserPage, expr string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 10*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// waitJS waits up to limit for expr to be true in the page, and returns
// how long it took; it fails t when limit passes.
func (p *browserPage) waitJS(t *testing.T, limit time.Duration, expr string) time.Duration {
	t.Helper()
	start := time.Now()
	ctx, cancel := context.WithTimeout(p.ctx, limit+5*time.Second)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr,
		chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(limit)))
	if err != nil {
		t.Fatalf("waited %s for %s: %v", time.Since(start).Round(time.Millisecond), expr, err)
	}
	return time.Since(start)
}

// waitVersion waits until the page shows state version v.
func (p *browserPage) waitVersion(t *testing.T, v uint64) {
	t.Helper()
	p.waitJS(t, 5*time.Second, fmt.Sprintf(`document.body.dataset.version === "%d"`, v))
}

// benchBinary builds cmd/queryd-bench once per test binary, beside the
// daemon TestMain built (and removes).
var benchBinary = sync.OnceValues(func() (string, error) {
	exe := filepath.Join(filepath.Dir(querydBin), "queryd-bench")
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	build := exec.Command(goTool, "build", "-o", exe, "./cmd/queryd-bench")
	build.Dir = ".." // the main module, as TestMain builds the daemon
	out, err := build.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build ./cmd/queryd-bench: %v\n%s", err, out)
	}
	return exe, nil
})

// startLoad runs the bench generator against d's UDP address with proto
// for at most dur (and count requests), from sources addresses
// 127.0.0.2 up; the returned func waits for it to end.
func startLoad(t *testing.T, d *daemontest.Daemon, proto string, sources int, dur time.Duration, count int) func() {
	t.Helper()
	exe, err := benchBinary()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "load", "-target", d.UDP().String(), "-proto", proto,
		"-sources", fmt.Sprint(sources), "-inflight", "4", "-duration", dur.String(), "-count", fmt.Sprint(count))
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var werr error
	go func() {
		werr = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		select {
		case <-exited:
		default:
			cmd.Process.Kill()
			<-exited
		}
	})
	wait := func() {
		t.Helper()
		select {
		case <-exited:
			if werr != nil {
				t.Errorf("queryd-bench load: %v\n%s", werr, out.String())
			}
		case <-time.After(dur + 10*time.Second):
			cmd.Process.Kill()
			<-exited
			t.Errorf("queryd-bench load did not end within %s", dur+10*time.Second)
		}
	}
	return wait
}
