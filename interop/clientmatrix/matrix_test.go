package clientmatrix

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCells: a cell says "yes" only when a check of it passed and none
// failed, "no" when any failed, "skipped" when all were skipped, and "not
// run" when no check recorded it.
func TestCells(t *testing.T) {
	file := filepath.Join(t.TempDir(), "results")
	for _, r := range []Result{
		{"qstat", Socket, Pass, "TestA2SClients/qstat"},
		{"qstat", Socket, Pass, "TestA2SFeedChange/qstat"},
		{"qstat", XDP, Skip, "TestXDPClients/a2s/qstat"},
		{"gamedig_valve", Socket, Pass, "TestA2SClients/gamedig_valve"},
		{"gamedig_valve", Socket, Fail, "TestA2SFeedChange/gamedig_valve"},
	} {
		if err := Append(file, r); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	results, err := Read(f)
	if err != nil || len(results) != 5 {
		t.Fatalf("Read: %d results, %v", len(results), err)
	}
	cells := Cells(results)
	for _, c := range []struct {
		client string
		path   Path
		want   string
	}{
		{"qstat", Socket, "yes"},
		{"qstat", XDP, "skipped"},
		{"qstat", Divert, "not run"},
		{"gamedig_valve", Socket, "**no**"},
		{"sqpprobe", Socket, "not run"},
	} {
		if got := cells[c.client][c.path].Text(); got != c.want {
			t.Errorf("%s on %s: %q, want %q", c.client, c.path, got, c.want)
		}
	}
	table := Table(results)
	if !strings.Contains(table, "| qstat `-a2s` | A2S | yes | skipped | not run | not run | not run |\n") {
		t.Errorf("table:\n%s", table)
	}
	if n := strings.Count(table, "\n"); n != len(Clients)+2 {
		t.Errorf("table of %d lines, want a heading, a rule and %d rows", n, len(Clients))
	}
}

// TestReadRefuses: a result of a client, path or outcome the matrix does
// not know is an error, not a row of its own (a typo in a check's name).
func TestReadRefuses(t *testing.T) {
	for _, line := range []string{
		`{"client":"qstatt","path":"socket","outcome":"pass"}`,
		`{"client":"qstat","path":"sockets","outcome":"pass"}`,
		`{"client":"qstat","path":"socket","outcome":"ok"}`,
		`not json`,
	} {
		if _, err := Read(strings.NewReader(line + "\n")); err == nil {
			t.Errorf("%s: accepted", line)
		}
	}
}

// TestSplice replaces only what is between the markers, and says when
// they are missing.
func TestSplice(t *testing.T) {
	doc := "# x\n\n" + Begin + "old\n" + End + "\nafter\n"
	got, old, err := Splice(doc, "new\n")
	if err != nil || old != "old\n" || got != "# x\n\n"+Begin+"new\n"+End+"\nafter\n" {
		t.Fatalf("Splice: %q %q %v", got, old, err)
	}
	if _, _, err := Splice("# x\n", "new\n"); err != ErrNoMarkers {
		t.Errorf("no markers: %v", err)
	}
}

// TestCompare: the document and the results agree cell by cell; a cell
// only skipped here (a tool missing) does not contradict the document's
// "yes" unless strict, but a check gone from the suite ("not run" where the
// document says "yes"), a failure, or a pass the document does not show
// does.
func TestCompare(t *testing.T) {
	full := []Result{}
	for _, c := range Clients {
		full = append(full, Result{c.Key, Socket, Pass, "T/" + c.Key})
	}
	doc, err := Parse(Table(full))
	if err != nil {
		t.Fatal(err)
	}
	if d, u := Compare(doc, full, true); len(d)+len(u) != 0 {
		t.Fatalf("the results' own table: %v %v", d, u)
	}
	replace := func(client, outcome string) []Result {
		out := []Result{}
		for _, r := range full {
			if r.Client == client {
				if outcome == "" {
					continue
				}
				r.Outcome = outcome
			}
			out = append(out, r)
		}
		return out
	}
	for _, c := range []struct {
		name                 string
		results              []Result
		strict               bool
		disagree, unverified int
	}{
		{"sqpprobe skipped", replace("sqpprobe", Skip), false, 0, 1},
		{"sqpprobe skipped, strict", replace("sqpprobe", Skip), true, 1, 0},
		{"sqpprobe gone", replace("sqpprobe", ""), false, 1, 0},
		{"qstat failed", replace("qstat", Fail), false, 1, 0},
		{"a new cell passed", append(append([]Result{}, full...), Result{"qstat", XDP, Pass, "T/x"}), false, 1, 0},
		{"a new cell skipped", append(append([]Result{}, full...), Result{"qstat", XDP, Skip, "T/x"}), false, 1, 0},
	} {
		d, u := Compare(doc, c.results, c.strict)
		if len(d) != c.disagree || len(u) != c.unverified {
			t.Errorf("%s: %d disagree, %d unverified (%v %v); want %d, %d", c.name, len(d), len(u), d, u, c.disagree, c.unverified)
		}
	}
	skipped := replace("sqpprobe", Skip)
	doc, err = Parse(Table(skipped))
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := Compare(doc, skipped, true); len(d) != 0 {
		t.Errorf("a document that says skipped, skipped again: %v", d)
	}
	if d, _ := Compare(doc, full, false); len(d) != 1 {
		t.Errorf("a document that says skipped, passed: %v, want 1 disagreement", d)
	}
	if _, err := Parse("| a |\n"); err == nil {
		t.Error("Parse: a table of one line accepted")
	}
}

// TestDocument: docs/clients.md has the markers and a table of every
// client in the matrix's order (whatever the results: the interop suite's
// run checks those).
func TestDocument(t *testing.T) {
	b, err := os.ReadFile("../../docs/clients.md")
	if err != nil {
		t.Fatal(err)
	}
	_, old, err := Splice(string(b), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse(old); err != nil {
		t.Errorf("docs/clients.md: %v", err)
	}
}
