package interop

import (
	"os"
	"testing"

	"github.com/queryd/queryd/interop/clientmatrix"
)

// clientCheck records, when $QUERYD_CLIENT_MATRIX names a file, how the
// client check t ends (passed, failed or skipped) as the cell of client (a
// clientmatrix.Clients key) on path: docs/clients.md's table is rendered
// from those results (interop/clientmatrix.sh). Call it first in each test
// that runs one real client against queryd; a test that runs several
// clients one after the other records each with the test's own outcome.
func clientCheck(t *testing.T, client string, path clientmatrix.Path) {
	t.Helper()
	if clientmatrix.Lookup(client) == nil || !clientmatrix.KnownPath(path) {
		t.Fatalf("clientCheck(%q, %q): not in interop/clientmatrix", client, path)
	}
	file := os.Getenv(clientmatrix.Env)
	if file == "" {
		return
	}
	t.Cleanup(func() {
		outcome := clientmatrix.Pass
		switch {
		case t.Skipped():
			outcome = clientmatrix.Skip
		case t.Failed():
			outcome = clientmatrix.Fail
		}
		if err := clientmatrix.Append(file, clientmatrix.Result{Client: client, Path: path, Outcome: outcome, Test: t.Name()}); err != nil {
			t.Error(err)
		}
	})
}
