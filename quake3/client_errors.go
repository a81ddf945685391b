package quake3

import (
	"fmt"

	"github.com/queryd/queryd/module"
)

// BadAnswerError is a reply the client cannot use: an info string or a
// player line it cannot parse, or only replies that do not echo the
// challenge. What says which. Callers test for it with errors.As. (Quake 3
// has no challenge round trip, so this client has no ErrOnlyChallenges.)
type BadAnswerError struct {
	What string
}

// Error returns What with the package's prefix.
func (e *BadAnswerError) Error() string { return "quake3: " + e.What }

// BadAnswer returns What (module.BadAnswer).
func (e *BadAnswerError) BadAnswer() string { return e.What }

var _ module.BadAnswer = (*BadAnswerError)(nil)

func badAnswer(format string, args ...any) error {
	return &BadAnswerError{What: fmt.Sprintf(format, args...)}
}
