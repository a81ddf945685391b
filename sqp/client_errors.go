package sqp

import (
	"fmt"

	"github.com/queryd/queryd/module"
)

// BadAnswerError is a reply the client cannot use: malformed (cut short, a
// chunk longer than the payload, an unknown type, a string that is not
// UTF-8), of another type or token than asked for, or an inconsistent set
// of packets. What says which. Callers test for it with errors.As.
type BadAnswerError struct {
	What string
}

// Error returns What with the package's prefix.
func (e *BadAnswerError) Error() string { return "sqp: " + e.What }

// BadAnswer returns What (module.BadAnswer).
func (e *BadAnswerError) BadAnswer() string { return e.What }

var _ module.BadAnswer = (*BadAnswerError)(nil)

// ErrOnlyChallenges is returned when the server answers maxChallenges
// requests in a row with a challenge instead of the query's reply.
var ErrOnlyChallenges = fmt.Errorf("sqp: %w", module.ErrOnlyChallenges)

// maxChallenges is how many tokens one query takes (the challenge's
// included) before it gives up with ErrOnlyChallenges (the same cap in
// every client).
const maxChallenges = module.MaxChallenges

func badAnswer(format string, args ...any) error {
	return &BadAnswerError{What: fmt.Sprintf(format, args...)}
}
