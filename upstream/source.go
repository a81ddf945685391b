package upstream

import (
	"errors"
	"fmt"

	"github.com/queryd/queryd/a2s"
	"github.com/queryd/queryd/quake3"
)

// source asks the game server one whole answer in its protocol, from a UDP
// socket of its own.
type source interface {
	// poll returns the answer, or why there is none: a *badAnswer when
	// something came that could not be read.
	poll() (answer, error)
	close() error
}

// answer is one poll's answer.
type answer struct {
	doc map[string]any // the state document (players keyed by place)
	// partial, when not nil, says what part went unanswered (its last
	// answer is in doc).
	partial error
}

// badAnswer is an answer that came but could not be read.
type badAnswer struct{ err error }

func (b *badAnswer) Error() string { return b.err.Error() }
func (b *badAnswer) Unwrap() error { return b.err }

// classify makes err a *badAnswer when it says the server answered
// something unreadable (the clients' BadAnswerError, or only challenges).
func classify(err error) error {
	var a2sBad *a2s.BadAnswerError
	var q3Bad *quake3.BadAnswerError
	if errors.As(err, &a2sBad) || errors.As(err, &q3Bad) || errors.Is(err, a2s.ErrOnlyChallenges) {
		return &badAnswer{err}
	}
	return err
}

// a2sSource asks A2S_INFO, A2S_PLAYER and A2S_RULES (with the challenge
// dance and split replies: a2s.Client). A2S_INFO must answer; when
// A2S_PLAYER or A2S_RULES does not (many servers turn RULES off), their
// last answers stand in.
type a2sSource struct {
	c       *a2s.Client
	players []a2s.PlayerInfo
	rules   [][2]string
}

func (s *a2sSource) poll() (answer, error) {
	info, err := s.c.Info()
	if err != nil {
		return answer{}, fmt.Errorf("A2S_INFO: %w", classify(err))
	}
	var partial error
	if ps, err := s.c.Players(); err == nil {
		s.players = ps
	} else {
		partial = fmt.Errorf("A2S_PLAYER: %w", err)
	}
	if rs, err := s.c.Rules(); err == nil {
		s.rules = rs
	} else {
		partial = errors.Join(partial, fmt.Errorf("A2S_RULES: %w", err))
	}
	return answer{FromA2S(info, s.players, s.rules), partial}, nil
}

func (s *a2sSource) close() error { return s.c.Close() }

// quake3Source asks getstatus (with a random challenge the reply must echo).
type quake3Source struct {
	c *quake3.Client
}

func (s *quake3Source) poll() (answer, error) {
	st, err := s.c.Status()
	if err != nil {
		return answer{}, fmt.Errorf("getstatus: %w", classify(err))
	}
	return answer{doc: FromQuake3(st)}, nil
}

func (s *quake3Source) close() error { return s.c.Close() }
