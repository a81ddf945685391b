package bedrock

import (
	"fmt"

	"github.com/queryd/queryd/module"
)

// BadAnswerError is a reply the client cannot use: a pong that is cut
// short, lacks the magic, whose status length does not match, whose text is
// not UTF-8 or whose status string lacks a field or a number; or, at the
// deadline, only datagrams that were not a pong to this ping. What says
// which. Callers test for it with errors.As. (The ping has no challenge
// round trip, so this client has no ErrOnlyChallenges.)
type BadAnswerError struct {
	What string
}

// Error returns What with the package's prefix.
func (e *BadAnswerError) Error() string { return "bedrock: " + e.What }

// BadAnswer returns What (module.BadAnswer).
func (e *BadAnswerError) BadAnswer() string { return e.What }

var _ module.BadAnswer = (*BadAnswerError)(nil)

func badAnswer(format string, args ...any) error {
	return &BadAnswerError{What: fmt.Sprintf(format, args...)}
}
