package xdp

import (
	"flag"
	"os"
	"testing"

	"github.com/queryd/queryd/internal/testkit"
)

// TestMain runs 4 of the parallel tests at once: each has namespaces of its
// own and mostly waits for replies (or for their absence).
func TestMain(m *testing.M) {
	flag.Parse()
	testkit.SetParallel(4)
	os.Exit(m.Run())
}
