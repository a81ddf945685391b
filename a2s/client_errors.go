package a2s

import (
	"errors"
	"fmt"
)

// BadAnswerError is a reply the client cannot use: malformed, of another
// type than the one asked for, or beyond the client's bounds (an incomplete
// or oversized split reply). What says which. Callers test for it with
// errors.As.
type BadAnswerError struct {
	What string
}

// Error returns What with the package's prefix.
func (e *BadAnswerError) Error() string { return "a2s: " + e.What }

// ErrOnlyChallenges is returned when the server answers maxChallenges
// requests in a row with a challenge instead of the reply.
var ErrOnlyChallenges = errors.New("a2s: the server answers only with challenges")

// maxChallenges is how many challenges one call answers before it gives up
// with ErrOnlyChallenges (the same cap in every client).
const maxChallenges = 3

func badAnswer(format string, args ...any) error {
	return &BadAnswerError{What: fmt.Sprintf(format, args...)}
}
