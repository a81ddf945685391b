package clients_test

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// TestCSharpClient builds clients/csharp (QuerydFeed.cs and Example.cs)
// with Debian's Mono compiler (mcs, warnings as errors) and runs the
// example on Mono (Unity's runtime) through the scenario (its state over
// A2S and SAGL, pings, a queryd restart under it), once over the feed
// socket and once over the HTTP feed.
func TestCSharpClient(t *testing.T) {
	t.Parallel()
	mcs := need(t, "mcs", "the C# client (Debian: mono-complete)")
	mono := need(t, "mono", "the C# client (Debian: mono-complete)")
	exe := filepath.Join(t.TempDir(), "example.exe")
	run(t, "csharp", mcs, "-warnaserror", "-out:"+exe, "QuerydFeed.cs", "Example.cs")
	t.Run("socket", func(t *testing.T) {
		t.Parallel()
		d := newDaemon(t)
		cmd := exec.Command(mono, exe)
		cmd.Env = []string{"QUERYD_FEED_HTTP="} // the socket only
		scenario(t, d, cmd, false)
	})
	t.Run("http", func(t *testing.T) {
		t.Parallel()
		d := newDaemon(t)
		cmd := exec.Command(mono, exe)
		cmd.Env = []string{"QUERYD_FEED_SOCKET="} // the HTTP feed only
		scenario(t, d, cmd, true)
	})
}

// TestCSharpQueue: QueueTest.cs through the queue scenario (see
// TestCppQueue) on Mono over the feed socket.
func TestCSharpQueue(t *testing.T) {
	t.Parallel()
	mcs := need(t, "mcs", "the C# client's queue (Debian: mono-complete)")
	mono := need(t, "mono", "the C# client's queue (Debian: mono-complete)")
	exe := filepath.Join(t.TempDir(), "queue_test.exe")
	run(t, "csharp", mcs, "-warnaserror", "-out:"+exe, "QuerydFeed.cs", "QueueTest.cs")
	queueScenario(t, newDaemon(t), exec.Command(mono, exe), "")
}

// TestCSharpRecover: RecoverTest.cs on Mono over the feed socket through
// the recover rows (see recoverRows): a queryd restart, a rejected patch
// then a restart, a rejected patch before queryd runs.
func TestCSharpRecover(t *testing.T) {
	t.Parallel()
	mcs := need(t, "mcs", "the C# client's recovery (Debian: mono-complete)")
	mono := need(t, "mono", "the C# client's recovery (Debian: mono-complete)")
	exe := filepath.Join(t.TempDir(), "recover_test.exe")
	run(t, "csharp", mcs, "-warnaserror", "-out:"+exe, "QuerydFeed.cs", "RecoverTest.cs")
	recoverRows(t, processRecover(func() *exec.Cmd {
		cmd := exec.Command(mono, exe)
		cmd.Env = []string{"QUERYD_FEED_HTTP="} // the socket only
		return cmd
	}))
}
