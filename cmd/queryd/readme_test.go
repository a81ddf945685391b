package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/queryd/queryd/config"
)

// TestREADMEPushExample: the README's `queryd push` example is accepted line
// by line by a running daemon, and the sentence after it warns that the demo
// goes silent after the demo config's [feed] stale_after (a new user saw the
// example work and, a minute later, nothing answer).
func TestREADMEPushExample(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	start := strings.Index(readme, "queryd push <<'EOF'\n")
	if start < 0 {
		t.Fatal("README.md has no `queryd push <<'EOF'` example")
	}
	body := readme[start+len("queryd push <<'EOF'\n"):]
	end := strings.Index(body, "\nEOF\n```\n")
	if end < 0 {
		t.Fatal("README.md's push example does not end in EOF and ```")
	}
	lines, after := body[:end+1], body[end+len("\nEOF\n```\n"):]

	dir := testDir(t)
	startTestDaemon(t, writeConfig(t, dir, ""))
	code, out, errOut := run(t, lines, "push", "-socket", filepath.Join(dir, "feed.sock"))
	if n := strings.Count(lines, "\n"); code != 0 || strings.Count(out, `{"ok":true,"version":`) != n {
		t.Fatalf("queryd push of the README's %d lines: exit %d\n%s%s", n, code, out, errOut)
	}

	demo, err := config.Parse(config.Default, configModules()...)
	if err != nil {
		t.Fatal(err)
	}
	stale := time.Duration(demo.Feed.StaleAfter)
	note, _, _ := strings.Cut(strings.TrimLeft(after, "\n"), "\n\n")
	note = strings.Join(strings.Fields(note), " ")
	if want := strconv.Itoa(int(stale.Seconds())) + " s after its last line the demo answers nothing"; !strings.Contains(note, want) {
		t.Errorf("the paragraph after README.md's push example does not say %q (the demo's stale_after is %v):\n%s", want, stale, note)
	}
}
