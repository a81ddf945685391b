package interop

import (
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/queryd/queryd/interop/clientmatrix"
)

// clientCheck records, when $QUERYD_CLIENT_MATRIX names a file, how the
// client check t ends (passed, failed or skipped) as the cell of client (a
// clientmatrix.Clients key) on path: docs/clients.md's table is rendered
// from those results (interop/clientmatrix.sh). Call it first in each test
// that runs one real client against queryd; a test that runs several
// clients one after the other records each with the test's own outcome.
// A test that may skip or stop before its client subtests run declares
// their cells with clientPlan.
func clientCheck(t *testing.T, client string, path clientmatrix.Path) {
	t.Helper()
	mustKnow(t, client, path)
	file := os.Getenv(clientmatrix.Env)
	if file == "" {
		return
	}
	started.add(t.Name(), client, path)
	t.Cleanup(func() { record(t, file, client, path, outcome(t)) })
}

// clientPlan declares, in a test whose subtests call clientCheck, the
// cells of clients on path that those subtests record. When the test is
// skipped or fails before a subtest of a cell ran (no root for the test
// network, sqpprobe missing, the daemon not starting), the cell is recorded
// as skipped or failed: a missing tool reads "skipped" in the results, not
// "not run", which the check takes for a check gone from the suite.
func clientPlan(t *testing.T, path clientmatrix.Path, clients ...string) {
	t.Helper()
	for _, c := range clients {
		mustKnow(t, c, path)
	}
	file := os.Getenv(clientmatrix.Env)
	if file == "" {
		return
	}
	t.Cleanup(func() {
		o := outcome(t)
		if o == clientmatrix.Pass {
			return // every cell that ran recorded itself; one filtered out by -run stays unrecorded
		}
		for _, c := range clients {
			if !started.under(t.Name(), c, path) {
				record(t, file, c, path, o)
			}
		}
	})
}

func mustKnow(t *testing.T, client string, path clientmatrix.Path) {
	t.Helper()
	if clientmatrix.Lookup(client) == nil || !clientmatrix.KnownPath(path) {
		t.Fatalf("client check (%q, %q): not in interop/clientmatrix", client, path)
	}
}

func outcome(t *testing.T) string {
	switch {
	case t.Skipped():
		return clientmatrix.Skip
	case t.Failed():
		return clientmatrix.Fail
	}
	return clientmatrix.Pass
}

func record(t *testing.T, file, client string, path clientmatrix.Path, o string) {
	r := clientmatrix.Result{Client: client, Path: path, Outcome: o, Test: t.Name()}
	if err := clientmatrix.Append(file, r); err != nil {
		t.Error(err)
	}
}

// started holds the cells each test's clientCheck began, for clientPlan.
var started = &startedCells{}

type startedCells struct {
	mu    sync.Mutex
	cells []startedCell
}

type startedCell struct {
	test, client string
	path         clientmatrix.Path
}

func (s *startedCells) add(test, client string, path clientmatrix.Path) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cells = append(s.cells, startedCell{test, client, path})
}

// under reports whether a subtest of test began the cell of client on path.
func (s *startedCells) under(test, client string, path clientmatrix.Path) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.cells {
		if c.client == client && c.path == path && strings.HasPrefix(c.test, test+"/") {
			return true
		}
	}
	return false
}

// TestClientPlan: a test that declared its cells and was skipped before
// its client subtests ran records them as skipped (sqpprobe missing on a
// machine is "skipped", not "not run", which would read as a check gone);
// a cell its subtest recorded is not recorded again.
func TestClientPlan(t *testing.T) {
	file := t.TempDir() + "/results"
	t.Setenv(clientmatrix.Env, file)
	t.Run("skipped", func(t *testing.T) {
		clientPlan(t, "socket", "sqpprobe", "qstat")
		t.Run("qstat", func(t *testing.T) { clientCheck(t, "qstat", "socket") })
		t.Skip("SKIP: sqpprobe not found (as needSQPProbe says)")
	})
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	results, err := clientmatrix.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	cells := clientmatrix.Cells(results)
	if len(results) != 2 || cells["sqpprobe"]["socket"].Text() != "skipped" || cells["qstat"]["socket"].Text() != "yes" {
		t.Errorf("results %+v: want sqpprobe skipped, qstat passed, once each", results)
	}
}
