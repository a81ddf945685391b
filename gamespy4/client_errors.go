package gamespy4

import (
	"fmt"

	"github.com/queryd/queryd/module"
)

// BadAnswerError is a reply the client cannot use: malformed (a token that
// is not a number, a string without its NUL, bytes left over), of another
// type or session than asked for. What says which. Callers test for it with
// errors.As.
type BadAnswerError struct {
	What string
}

// Error returns What with the package's prefix.
func (e *BadAnswerError) Error() string { return "gamespy4: " + e.What }

// BadAnswer returns What (module.BadAnswer).
func (e *BadAnswerError) BadAnswer() string { return e.What }

var _ module.BadAnswer = (*BadAnswerError)(nil)

// ErrOnlyChallenges is returned when the server answers maxChallenges
// requests in a row with a handshake token instead of the stat.
var ErrOnlyChallenges = fmt.Errorf("gamespy4: %w", module.ErrOnlyChallenges)

// maxChallenges is how many tokens one stat call takes (the handshake's
// included) before it gives up with ErrOnlyChallenges (the same cap in
// every client).
const maxChallenges = module.MaxChallenges

func badAnswer(format string, args ...any) error {
	return &BadAnswerError{What: fmt.Sprintf(format, args...)}
}
