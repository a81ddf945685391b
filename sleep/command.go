package sleep

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// MaxOutput is how much of a command's output (stdout and stderr
// together) queryd keeps and logs; the rest is read and counted.
const MaxOutput = 4 << 10

// waitDelay is how long a command's output pipes may stay open once the
// command has exited (a program it left running that kept them):
// then they are closed and the command counts as done.
const waitDelay = 2 * time.Second

// Result is how a command ended.
type Result struct {
	// Err is nil when it exited 0; else why not (its exit status, a
	// timeout, or why it could not run).
	Err error
	// Output is its first MaxOutput bytes of output (stdout and stderr
	// interleaved), Dropped how many more there were.
	Output  string
	Dropped int64
	// Took is how long it ran.
	Took time.Duration
}

// ErrTimeout is a Result's Err (wrapped) when the command ran past its
// timeout and was killed, with every process of its process group.
var ErrTimeout = errors.New("did not exit in time: killed")

// Run runs argv (no shell: argv[0] is the program, looked up on PATH when
// it has no slash) with timeout, in a process group of its own, its
// output captured up to MaxOutput bytes. Past the timeout, or once ctx
// ends, the whole group is killed (SIGKILL). It waits for the command's
// end, and at most waitDelay more for output pipes that a program it left
// running holds open.
func Run(ctx context.Context, argv []string, timeout time.Duration) Result {
	if len(argv) == 0 {
		return Result{Err: errors.New("no command")}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	out := &capped{max: MaxOutput}
	cmd.Stdout, cmd.Stderr = out, out
	ownProcessGroup(cmd)
	cmd.WaitDelay = waitDelay
	start := time.Now()
	err := cmd.Run()
	r := Result{Took: time.Since(start)}
	r.Output, r.Dropped = out.text()
	switch {
	case errors.Is(err, exec.ErrWaitDelay):
		// It exited 0 and left a program holding its output: the command
		// did its work (a start that launched the game server that way).
	case ctx.Err() == context.DeadlineExceeded && err != nil:
		r.Err = fmt.Errorf("%w after %s", ErrTimeout, timeout)
	case err != nil:
		r.Err = err
	}
	return r
}

// capped keeps the first max bytes written to it and counts the rest.
type capped struct {
	mu      sync.Mutex
	max     int
	b       bytes.Buffer
	dropped int64
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	room := c.max - c.b.Len()
	if room >= len(p) {
		c.b.Write(p)
		return len(p), nil
	}
	c.b.Write(p[:max(room, 0)])
	c.dropped += int64(len(p) - max(room, 0))
	return len(p), nil
}

// text is the output kept, trimmed, and how many bytes were not kept.
func (c *capped) text() (string, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.TrimSpace(c.b.String()), c.dropped
}
