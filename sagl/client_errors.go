package sagl

import (
	"fmt"
	"os"

	"github.com/queryd/queryd/module"
)

// BadAnswerError is a reply the client cannot use: a datagram over the
// protocol's 1,200 bytes, a part or piece that does not fit its JSON or
// logo, a JSON or logo over the client's caps, a JSON that does not decode,
// a logo that does not match its SHA-256. What says which. Callers test for
// it with errors.As.
type BadAnswerError struct {
	What string
}

// Error returns What with the package's prefix.
func (e *BadAnswerError) Error() string { return "sagl: " + e.What }

// BadAnswer returns What (module.BadAnswer).
func (e *BadAnswerError) BadAnswer() string { return e.What }

var _ module.BadAnswer = (*BadAnswerError)(nil)

// ErrOnlyChallenges is returned when the server answers maxChallenges
// requests with a new challenge, or sent nothing but challenges by the
// deadline.
var ErrOnlyChallenges = fmt.Errorf("sagl: %w", module.ErrOnlyChallenges)

// maxChallenges is how many new tokens one Info or Logo call takes before
// it gives up with ErrOnlyChallenges (the same cap in every client). A
// challenge repeating the current token is not asked again at once: the
// call waits for its next retry.
const maxChallenges = module.MaxChallenges

func badAnswer(format string, args ...any) error {
	return &BadAnswerError{What: fmt.Sprintf(format, args...)}
}

// tally is what one call received besides the replies it used, to say why
// it ended without an answer.
type tally struct {
	challenges int    // challenges received
	tokens     int    // new tokens taken
	dropped    int    // replies dropped
	reason     string // why the last one was dropped
}

func (t *tally) drop(reason string) {
	t.dropped++
	t.reason = reason
}

// failure is the error of a call that reached its deadline; progress says
// what it had got ("" when nothing usable came).
func (t *tally) failure(progress string) error {
	switch {
	case t.dropped > 0:
		return badAnswer("%s (%d replies dropped)", t.reason, t.dropped)
	case progress != "":
		return fmt.Errorf("sagl: no complete answer in time (%s): %w", progress, os.ErrDeadlineExceeded)
	case t.challenges > 0:
		return ErrOnlyChallenges
	}
	return fmt.Errorf("sagl: no answer in time: %w", os.ErrDeadlineExceeded)
}
