package module

import (
	"context"
	"errors"
	"io"
	"strconv"
	"strings"
	"time"
)

// QueryOptions are what `queryd query` passes every module's client.
type QueryOptions struct {
	// Logo, for modules with a logo (SAGL): save it to this file.
	Logo string
	// Notes, when set, takes a module's notes for people (a round trip, a
	// saved file); nil when several protocols are asked at once.
	Notes io.Writer
	// Steps is how long each request of a query of several steps may wait
	// for its answer (0: the whole context).
	Steps time.Duration
}

// Answer is one module's whole answer to `queryd query`: the row of its
// table and the full answer printed as JSON.
type Answer struct {
	Summary Summary
	// Full is the whole answer, as `queryd query -proto NAME` prints it
	// (anything encoding/json can print).
	Full any
}

// Summary is one protocol's line in `queryd query -table` and in the
// "summary" of the auto JSON (the round trip and the error are the
// command's own).
type Summary struct {
	Name       string
	Map        string
	Players    *int
	MaxPlayers *int
}

// Probe is a protocol's first request as real clients send it, and how to
// read the reply: `queryd query` sends it once to measure the round trip,
// or to tell "no answer" from "answered only with challenges".
type Probe struct {
	Request []byte
	// Reply reports whether p is this protocol's reply to Request.
	Reply func(p []byte) bool
	// Challenge reports whether that reply is a challenge, not an answer.
	Challenge func(p []byte) bool
	// Rate says, for people, how many requests a second servers of this
	// protocol answer each source ("" when they set no such limit): a
	// script polling faster meets it, and `queryd query` says so when a
	// query goes unanswered.
	Rate string
}

// BadAnswer is implemented by every client's error for a reply it cannot
// use (malformed, of another type than asked, beyond the client's bounds):
// `queryd query` reports it as "bad answer: …" whatever else happened.
type BadAnswer interface {
	error
	// BadAnswer says what was wrong with the reply.
	BadAnswer() string
}

// ErrOnlyChallenges is wrapped by every client's error for a server that
// answers only with challenges (MaxChallenges in one call).
var ErrOnlyChallenges = errors.New("the server answers only with challenges")

// MaxChallenges is how many challenges one client call answers before it
// gives up with ErrOnlyChallenges, the same in every client.
const MaxChallenges = 3

// IntPtr returns a pointer to n, for Summary's optional counts.
func IntPtr(n int) *int { return &n }

// StepTimeout is how long one request of a query may wait: opts.Steps when
// set, else what is left of ctx's deadline (else 3 s).
func StepTimeout(ctx context.Context, opts QueryOptions) time.Duration {
	if opts.Steps > 0 {
		return opts.Steps
	}
	if d, ok := ctx.Deadline(); ok {
		return max(time.Until(d), time.Millisecond)
	}
	return 3 * time.Second
}

// Count parses a player count a protocol sends as text ("12"); nil when it
// is not a number.
func Count(s string) *int {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return nil
	}
	return &n
}

// StepError is a query's error at one of its requests: Step 0 is the first
// (A2S_INFO, the basic stat, getinfo). `queryd query` tells a server that
// answered the first request and then went silent (rate limited) from one
// that never answered.
type StepError struct {
	Step int    // the request's place in the query, from 0
	Name string // the request ("A2S_PLAYER")
	Err  error
}

func (e *StepError) Error() string { return e.Name + ": " + e.Err.Error() }

// Unwrap returns the client's error.
func (e *StepError) Unwrap() error { return e.Err }

// Step wraps err (nil stays nil) as the error of request step of a query.
func Step(step int, name string, err error) error {
	if err == nil {
		return nil
	}
	return &StepError{Step: step, Name: name, Err: err}
}
