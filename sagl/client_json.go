package sagl

import (
	"bytes"
	"encoding/json"
	"time"
)

// The client's caps (what it refuses beyond them is a BadAnswerError).
const (
	// MaxJSON is the longest JSON a client accepts (an info reply's
	// total): about twice the most queryd sends (1.9 MiB: 4,096 players
	// with the longest names, every optional field at its longest).
	MaxJSON = 4 << 20
	// MaxDepth is the deepest nesting of objects and arrays a client
	// accepts in the JSON (queryd's own JSON nests 3 deep).
	MaxDepth = 64
	// MaxItems is the most items a client accepts in the JSON: objects,
	// arrays, and the members and elements they hold (queryd's own JSON
	// has at most about 25,000). It bounds what decoding costs: a few tens
	// of bytes per item, however small the item is on the wire.
	MaxItems = 1 << 17
	// MaxLogo is the largest logo a client fetches: the most [sagl]
	// max_logo allows.
	MaxLogo = 16 << 20
)

// newResult checks and decodes a reassembled JSON. A JSON decoded after
// the deadline is not returned: the call ends by its timeout.
func newResult(js []byte, serial uint32, rtt time.Duration, deadline time.Time) (*Result, error) {
	if err := checkJSON(js); err != nil {
		return nil, err
	}
	r := &Result{JSON: js, Serial: serial, RTT: rtt}
	if err := json.Unmarshal(js, &r.Info); err != nil {
		return nil, badAnswer("the JSON: %v", err)
	}
	if time.Now().After(deadline) {
		return nil, (&tally{}).failure("the JSON decoded after the deadline")
	}
	return r, nil
}

// checkJSON checks what json.Unmarshal into Info does not: an object at the
// top (not null), nesting at most MaxDepth deep, at most MaxItems items.
// Syntax is left to json.Unmarshal.
func checkJSON(js []byte) error {
	js = bytes.TrimLeft(js, " \t\r\n")
	if len(js) == 0 || js[0] != '{' {
		return badAnswer("the JSON is not an object")
	}
	var s jsonScan
	for _, b := range js {
		if err := s.next(b); err != nil {
			return err
		}
	}
	return nil
}

// jsonScan counts the depth and the items of a JSON text byte by byte,
// outside its strings.
type jsonScan struct {
	depth    int
	items    int
	inString bool
	escaped  bool
	opened   bool // the last byte outside whitespace opened a container
}

func (s *jsonScan) next(b byte) error {
	switch {
	case s.inString:
		switch {
		case s.escaped:
			s.escaped = false
		case b == '\\':
			s.escaped = true
		case b == '"':
			s.inString = false
		}
		return nil
	case b == ' ' || b == '\t' || b == '\r' || b == '\n':
		return nil
	}
	if s.opened && b != '}' && b != ']' {
		s.items++ // the container's first member or element
	}
	s.opened = false
	switch b {
	case '"':
		s.inString = true
	case ',':
		s.items++ // one more member or element
	case '{', '[':
		s.items++
		s.opened = true
		if s.depth++; s.depth > MaxDepth {
			return badAnswer("the JSON nests deeper than %d", MaxDepth)
		}
	case '}', ']':
		s.depth--
	}
	if s.items > MaxItems {
		return badAnswer("the JSON has more than %d items", MaxItems)
	}
	return nil
}
