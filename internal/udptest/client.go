package udptest

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// The client side of the tests of a query client against a hostile
// server (Serve, Answer): every call must end by the client's timeout
// with the error that names what the server did.

// HostileTimeout is the timeout a client facing a hostile server gets.
const HostileTimeout = 500 * time.Millisecond

// Dial dials addr with a package's dial function (a2s.Dial, …) and
// closes the client when t ends; it fails t when the dial does.
func Dial[C io.Closer](t testing.TB, dial func(addr string) (C, error), addr string) C {
	t.Helper()
	c, err := dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// InTime fails t when a call that started at start took longer than
// HostileTimeout and 300 ms of scheduling slack.
func InTime(t testing.TB, start time.Time) {
	t.Helper()
	if took := time.Since(start); took > HostileTimeout+300*time.Millisecond {
		t.Fatalf("the call took %s with a timeout of %s", took, HostileTimeout)
	}
}

// badAnswer is a client's error for an unusable reply (module.BadAnswer).
type badAnswer interface {
	error
	BadAnswer() string
}

// WantBadAnswer fails t unless err is a client's error for an unusable
// reply (module.BadAnswer: each package's *BadAnswerError) whose
// description contains what.
func WantBadAnswer(t testing.TB, err error, what string) {
	t.Helper()
	var bad badAnswer
	if !errors.As(err, &bad) || !strings.Contains(bad.BadAnswer(), what) {
		t.Fatalf("err %v; want a bad answer saying %q", err, what)
	}
}
