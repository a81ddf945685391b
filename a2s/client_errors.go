package a2s

import (
	"fmt"

	"github.com/queryd/queryd/module"
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

// BadAnswer returns What (module.BadAnswer).
func (e *BadAnswerError) BadAnswer() string { return e.What }

var _ module.BadAnswer = (*BadAnswerError)(nil)

// ErrOnlyChallenges is returned when the server answers maxChallenges
// requests in a row with a challenge instead of the reply.
var ErrOnlyChallenges = fmt.Errorf("a2s: %w", module.ErrOnlyChallenges)

// maxChallenges is how many challenges one call answers before it gives up
// with ErrOnlyChallenges (the same cap in every client).
const maxChallenges = module.MaxChallenges

func badAnswer(format string, args ...any) error {
	return &BadAnswerError{What: fmt.Sprintf(format, args...)}
}
