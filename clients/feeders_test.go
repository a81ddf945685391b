package clients_test

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// TestNodeRecover: examples/node/feeder.mjs's Feed, driven by
// examples/node/recover_test.mjs on node over the feed socket, through the
// recover rows (see recoverRows).
func TestNodeRecover(t *testing.T) {
	t.Parallel()
	node := need(t, "node", "the Node.js feeder's recovery")
	script, err := filepath.Abs("../examples/node/recover_test.mjs")
	if err != nil {
		t.Fatal(err)
	}
	recoverRows(t, processRecover(func() *exec.Cmd { return exec.Command(node, script) }))
}

// TestPythonRecover: examples/python/feeder.py's Feed, driven by
// examples/python/recover_test.py on python3 over the feed socket, through
// the recover rows (see recoverRows).
func TestPythonRecover(t *testing.T) {
	t.Parallel()
	py := need(t, "python3", "the Python feeder's recovery")
	script, err := filepath.Abs("../examples/python/recover_test.py")
	if err != nil {
		t.Fatal(err)
	}
	recoverRows(t, processRecover(func() *exec.Cmd { return exec.Command(py, script) }))
}
