package netlimit

import (
	"bufio"
	"errors"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func listenUnix(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("unix", filepath.Join(t.TempDir(), "s"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

func dial(t *testing.T, ln net.Listener) net.Conn {
	t.Helper()
	c, err := net.Dial(ln.Addr().Network(), ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

type acceptResult struct {
	c   net.Conn
	err error
}

func acceptAsync(l net.Listener) chan acceptResult {
	ch := make(chan acceptResult, 1)
	go func() {
		c, err := l.Accept()
		ch <- acceptResult{c, err}
	}()
	return ch
}

// TestAcceptOutlivesEMFILE runs the process out of descriptors while a
// connection waits in the backlog: the raw Accept fails with EMFILE, the
// Listener keeps retrying and returns the connection once descriptors are
// free again.
func TestAcceptOutlivesEMFILE(t *testing.T) {
	ln := listenUnix(t)
	dial(t, ln) // waits in the backlog
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	low := old
	low.Cur = 256
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Skipf("cannot lower RLIMIT_NOFILE: %v", err)
	}
	defer syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old)
	var held []*os.File
	defer func() {
		for _, f := range held {
			f.Close()
		}
	}()
	for {
		f, err := os.Open(os.DevNull)
		if err != nil {
			if !errors.Is(err, syscall.EMFILE) {
				t.Fatalf("exhausting descriptors: %v", err)
			}
			break
		}
		held = append(held, f)
		if len(held) > 300 {
			t.Fatal("RLIMIT_NOFILE did not bind")
		}
	}
	if len(held) < 4 {
		t.Skipf("only %d descriptors were free under the lowered limit", len(held))
	}
	if _, err := ln.Accept(); !errors.Is(err, syscall.EMFILE) {
		t.Fatalf("raw Accept with no descriptors left: %v, want EMFILE (else this test proves nothing)", err)
	}
	l := &Listener{Listener: ln}
	got := acceptAsync(l)
	deadline := time.Now().Add(2 * time.Second)
	for l.Retried() < 2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if l.Retried() < 2 {
		t.Fatalf("Accept retried %d times while out of descriptors, want ≥ 2", l.Retried())
	}
	select {
	case r := <-got:
		t.Fatalf("Accept returned while out of descriptors: %v", r.err)
	default:
	}
	for _, f := range held[len(held)-4:] {
		f.Close()
	}
	held = held[:len(held)-4]
	select {
	case r := <-got:
		if r.err != nil {
			t.Fatalf("Accept after descriptors came back: %v", r.err)
		}
		r.c.Close()
	case <-time.After(3 * time.Second):
		t.Fatal("Accept did not return within 3 s of descriptors coming back")
	}
}

// TestRetryableErrors lists the accept errors that are waited out.
func TestRetryableErrors(t *testing.T) {
	for _, e := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM, syscall.ECONNABORTED} {
		err := &net.OpError{Op: "accept", Err: os.NewSyscallError("accept4", e)}
		if !Retryable(err) {
			t.Errorf("%v: not retryable", e)
		}
	}
	for _, err := range []error{net.ErrClosed, &net.OpError{Op: "accept", Err: os.NewSyscallError("accept4", syscall.EBADF)}, errors.New("x")} {
		if Retryable(err) {
			t.Errorf("%v: retryable", err)
		}
	}
}

// TestRejectOverMax: with Max 2 and a Reject, the third open connection is
// rejected with its message while the first two stay served; closing one
// frees a slot for the next.
func TestRejectOverMax(t *testing.T) {
	ln := listenUnix(t)
	l := &Listener{Listener: ln, Max: 2, Reject: func(c net.Conn) {
		c.Write([]byte("full\n"))
		c.Close()
	}}
	var served []net.Conn
	for i := 0; i < 2; i++ {
		dial(t, ln)
		c, err := l.Accept()
		if err != nil {
			t.Fatal(err)
		}
		served = append(served, c)
	}
	third := dial(t, ln)
	got := acceptAsync(l)
	third.SetReadDeadline(time.Now().Add(2 * time.Second))
	line, err := bufio.NewReader(third).ReadString('\n')
	if err != nil || line != "full\n" {
		t.Fatalf("third connection read %q, %v; want the reject line", line, err)
	}
	if l.Rejected() != 1 || l.Open() != 2 {
		t.Fatalf("rejected %d, open %d; want 1, 2", l.Rejected(), l.Open())
	}
	served[0].Close()
	served[0].Close() // a second Close frees nothing more
	dial(t, ln)
	select {
	case r := <-got:
		if r.err != nil {
			t.Fatal(r.err)
		}
		r.c.Close()
	case <-time.After(2 * time.Second):
		t.Fatal("no Accept after a slot was freed")
	}
	if l.Open() != 1 {
		t.Fatalf("open %d, want 1", l.Open())
	}
}

// TestWaitAtMax: without Reject, Accept waits for a free slot; Close ends
// the wait.
func TestWaitAtMax(t *testing.T) {
	ln := listenUnix(t)
	l := &Listener{Listener: ln, Max: 1}
	dial(t, ln)
	first, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	dial(t, ln)
	got := acceptAsync(l)
	select {
	case <-got:
		t.Fatal("Accept returned a second connection over Max 1")
	case <-time.After(100 * time.Millisecond):
	}
	first.Close()
	select {
	case r := <-got:
		if r.err != nil {
			t.Fatal(r.err)
		}
		r.c.Close()
	case <-time.After(2 * time.Second):
		t.Fatal("Accept did not take the freed slot")
	}
	dial(t, ln)
	held, _ := l.Accept()
	defer held.Close()
	waiting := acceptAsync(l)
	l.Close()
	select {
	case r := <-waiting:
		if !errors.Is(r.err, net.ErrClosed) {
			t.Fatalf("Accept after Close: %v, want net.ErrClosed", r.err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Close did not end an Accept waiting for a slot")
	}
}
