package netlimit

import (
	"errors"
	"net"
	"syscall"
	"time"
)

// Retryable reports whether an error from Accept is a passing shortage after
// which the listener still works: out of descriptors (EMFILE, ENFILE),
// buffers or memory (ENOBUFS, ENOMEM), a connection aborted before it was
// accepted (ECONNABORTED), or a timeout.
func Retryable(err error) bool {
	for _, e := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM, syscall.ECONNABORTED, syscall.EINTR} {
		if errors.Is(err, e) {
			return true
		}
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// Backoff is the pause between retries of a failing accept: 5 ms, doubling
// to at most 1 s, like net/http's. The zero value is ready to use.
type Backoff struct {
	d time.Duration
}

// Backoff bounds.
const (
	MinBackoff = 5 * time.Millisecond
	MaxBackoff = time.Second
)

// Next returns the next pause and doubles the one after it.
func (b *Backoff) Next() time.Duration {
	if b.d == 0 {
		b.d = MinBackoff
	} else {
		b.d = min(2*b.d, MaxBackoff)
	}
	return b.d
}

// Reset starts the pauses over after a success.
func (b *Backoff) Reset() { b.d = 0 }
