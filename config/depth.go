package config

import (
	"fmt"
	"strings"
)

// MaxDepth is how deeply a config may nest. A value's depth is the number of
// table names, keys and array positions on its path from the top of the file:
// under [server], name = "x" is at depth 2 (server, name); [server.players.1]
// name = "a" at 4; x = [[1]] puts the 1 at 4 (server, x, 0, 0). The deepest
// value queryd's schema has is at 4 ([[quake3.masters]] address, and
// [server] players); deeper files are refused before the TOML decoder sees
// them, because its time and memory grow with the square of the depth.
const MaxDepth = 32

// MaxKeyParts bounds the keys of a config. Every part of every key and
// [table] name counts its depth: [server] name = "x" counts 1 + 2; a dotted
// key a.b.c = 1 under [server] 2 + 3 + 4; a [server] of 4,096 players as
// [server.players.N] tables of five fields about 106,000. The TOML decoder
// spends a few hundred bytes on each (it copies a key's path for each of its
// parts).
const MaxKeyParts = 1 << 18

// LimitError is a config over MaxDepth or MaxKeyParts: the line where the
// limit was crossed, the key being read there, which limit and how it counts.
type LimitError struct {
	Line   int
	Key    string
	Reason string // "nested deeper than 32 levels"
	Detail string // how the limit counts
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%s (line %d); %s", e.Reason, e.Line, e.Detail)
}

// checkDepth scans TOML text and returns a *LimitError when a value sits
// deeper than max, or the keys' depths add up to more than MaxKeyParts. It reads strings (basic, literal, multi-line), comments,
// table headers, dotted keys, arrays and inline tables the way the decoder
// does; on text that is not TOML it carries on leniently (the decoder
// rejects it), never counting less than the decoder would nest (at most
// twice as deep, for table names after an [[array of tables]]). It uses
// memory bounded by max, not by the input.
func checkDepth(data []byte, max int) error {
	s := &depthScanner{data: data, line: 1, max: max}
	return s.run()
}

// scanner states: what the next significant character starts.
const (
	stKey   = iota // a key, or at the start of a top-level line a [table]
	stValue        // a value
	stAfter        // the end of a value: ',', ']', '}', a newline
)

// frame is one open array or inline table.
type frame struct {
	table bool // an inline table; else an array
	depth int  // the depth of the array or table itself
}

type depthScanner struct {
	data   []byte
	i      int
	line   int
	max    int
	table  int      // depth of the current [table]: its keys are one deeper
	frames []frame  // open arrays and inline tables, at most max+1
	key    []string // the current table's name and the top-level key being read, for errors
	nhead  int      // how many of key are the table's name
	st     int
	vdepth int  // the depth of a value starting here
	parts  int  // the depths of every key and header part so far, summed
	arrays bool // an [[array of tables]] header was read: a later header's part may name one
}

func (s *depthScanner) run() error {
	for s.i < len(s.data) {
		c := s.data[s.i]
		switch c {
		case '\n', '\r': // the decoder ends lines (and comments) at either
			if c == '\n' {
				s.line++
			}
			s.i++
			if len(s.frames) == 0 {
				s.st = stKey
				s.key = s.key[:s.nhead]
			}
			continue
		case ' ', '\t':
			s.i++
			continue
		case '#':
			s.skipComment()
			continue
		}
		var err error
		switch s.st {
		case stKey:
			err = s.keyStart(c)
		case stValue:
			err = s.value(c)
		default:
			s.after(c)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// keyStart reads a [table] header, the '}' of an empty inline table, or a
// key and its '='.
func (s *depthScanner) keyStart(c byte) error {
	top := s.top()
	switch {
	case c == '[' && top == nil:
		s.st = stAfter
		return s.header()
	case c == '}' && top != nil:
		s.pop()
		return nil
	}
	ctx := s.table
	if top != nil {
		ctx = top.depth
	}
	d, err := s.keyPath(ctx, top == nil)
	s.vdepth, s.st = d, stValue
	return err
}

// value starts a value: an array, an inline table, a string or a scalar.
func (s *depthScanner) value(c byte) error {
	top := s.top()
	if (c == ']' && top != nil && !top.table) || (c == '}' && top != nil && top.table) {
		s.pop() // an empty array, or a trailing comma
		return nil
	}
	if s.vdepth > s.max {
		return s.tooDeep()
	}
	switch c {
	case '[':
		s.i++
		s.frames = append(s.frames, frame{depth: s.vdepth})
		s.vdepth++
		return nil
	case '{':
		s.i++
		s.frames = append(s.frames, frame{table: true, depth: s.vdepth})
		s.st = stKey
		return nil
	case '"', '\'':
		s.skipString()
	default:
		s.i++ // a scalar: the rest of it is skipped in stAfter
	}
	s.st = stAfter
	return nil
}

// after reads what follows a value. What cannot follow one is skipped,
// except an opening bracket, which is read as a value (never less deep).
func (s *depthScanner) after(c byte) {
	top := s.top()
	switch c {
	case ',':
		s.i++
		switch {
		case top == nil:
		case top.table:
			s.st = stKey
		default:
			s.st, s.vdepth = stValue, top.depth+1
		}
	case ']', '}':
		if top == nil {
			s.i++
		} else {
			s.pop()
		}
	case '[', '{':
		s.st = stValue
		if top != nil {
			s.vdepth = top.depth + 1
		}
	case '"', '\'':
		s.skipString()
	default:
		s.i++
	}
}

func (s *depthScanner) top() *frame {
	if len(s.frames) == 0 {
		return nil
	}
	return &s.frames[len(s.frames)-1]
}

// pop closes the innermost array or inline table at its closing bracket.
func (s *depthScanner) pop() {
	s.i++
	s.frames = s.frames[:len(s.frames)-1]
	s.st = stAfter
}

// header reads a [table] or [[array of tables]] header and makes it the
// current table. Once the file has an array of tables, each part of a
// later header but its last counts two (its name and, should it be an
// array of tables, its last table's position): the scanner keeps no list of
// the arrays, so it counts as if each were one, at most twice the depth.
func (s *depthScanner) header() error {
	s.i++
	array := s.i < len(s.data) && s.data[s.i] == '['
	extra := 0
	if array {
		s.i++
		extra = 1 // the array's position
	}
	s.key, s.nhead = s.key[:0], 0
	d := 0
	for {
		if !s.segment(true) {
			break
		}
		d++
		if d+extra > s.max {
			return s.tooDeep()
		}
		if err := s.count(d + extra); err != nil {
			return err
		}
		s.skipBlanks()
		if s.i >= len(s.data) || s.data[s.i] != '.' {
			break
		}
		s.i++
		if s.arrays { // the part may be an array of tables: the name goes on in its last table
			d++
		}
	}
	if s.i < len(s.data) && s.data[s.i] == ']' {
		s.i++
		if array && s.i < len(s.data) && s.data[s.i] == ']' {
			s.i++
		}
	}
	s.table, s.nhead = d+extra, len(s.key)
	s.arrays = s.arrays || array
	return nil
}

// keyPath reads a (dotted) key up to and including its '=' and returns the
// depth of its value: ctx plus one per part. Each part counts its depth
// towards MaxKeyParts. A missing or malformed part
// counts one too, so that every open bracket is deeper than the one before.
// Only a top-level key (record) is named in errors.
func (s *depthScanner) keyPath(ctx int, record bool) (int, error) {
	d := ctx
	for {
		if !s.segment(record) && s.i < len(s.data) && !strings.ContainsRune("\n\r=.", rune(s.data[s.i])) {
			s.i++ // not a key: skip it (the decoder rejects it)
		}
		d++
		if d > s.max {
			return d, s.tooDeep()
		}
		if err := s.count(d); err != nil {
			return d, err
		}
		s.skipBlanks()
		if s.i < len(s.data) && s.data[s.i] == '.' {
			s.i++
			continue
		}
		if s.i < len(s.data) && s.data[s.i] == '=' {
			s.i++
		}
		return d, nil
	}
}

// segment reads one part of a key or table name (bare or quoted) after any
// blanks and reports whether there was one. With record, the part is added
// to key.
func (s *depthScanner) segment(record bool) bool {
	s.skipBlanks()
	if s.i >= len(s.data) {
		return false
	}
	start := s.i
	switch c := s.data[s.i]; {
	case c == '"' || c == '\'':
		s.skipLineString(c)
	case isBare(c):
		for s.i < len(s.data) && isBare(s.data[s.i]) {
			s.i++
		}
	default:
		return false
	}
	if record && len(s.key) <= s.max {
		s.key = append(s.key, string(s.data[start:min(s.i, start+64)]))
	}
	return true
}

func isBare(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

func (s *depthScanner) skipBlanks() {
	for s.i < len(s.data) && (s.data[s.i] == ' ' || s.data[s.i] == '\t') {
		s.i++
	}
}

// skipComment skips to the end of the line ('\n' or '\r', as the decoder).
func (s *depthScanner) skipComment() {
	for s.i < len(s.data) && s.data[s.i] != '\n' && s.data[s.i] != '\r' {
		s.i++
	}
}

// skipString skips a string value: basic, literal, or either multi-line.
func (s *depthScanner) skipString() {
	q := s.data[s.i]
	if s.i+2 < len(s.data) && s.data[s.i+1] == q && s.data[s.i+2] == q {
		s.skipMultiline(q)
		return
	}
	s.skipLineString(q)
}

// skipLineString skips a one-line string opened by quote q at s.i. It ends
// at its closing quote, or before the end of the line (the decoder rejects
// a string that reaches it).
func (s *depthScanner) skipLineString(q byte) {
	s.i++
	for s.i < len(s.data) {
		switch c := s.data[s.i]; {
		case c == '\n' || c == '\r':
			return
		case c == q:
			s.i++
			return
		case c == '\\' && q == '"' && s.i+1 < len(s.data) && s.data[s.i+1] != '\n' && s.data[s.i+1] != '\r':
			s.i += 2
		default:
			s.i++
		}
	}
}

// skipMultiline skips a multi-line string opened by three quotes q at s.i.
// It ends at three quotes or more (up to five: a closing delimiter may
// follow one or two quotes of the content).
func (s *depthScanner) skipMultiline(q byte) {
	s.i += 3
	for s.i < len(s.data) {
		c := s.data[s.i]
		switch {
		case c == '\n':
			s.line++
			s.i++
		case c == '\\' && q == '"':
			s.i++
			if s.i < len(s.data) && s.data[s.i] == '\n' {
				s.line++
			}
			s.i++
		case c == q:
			n := 0
			for s.i+n < len(s.data) && s.data[s.i+n] == q {
				n++
			}
			s.i += min(n, 5)
			if n >= 3 {
				return
			}
		default:
			s.i++
		}
	}
}

// count adds a key part of depth d to parts.
func (s *depthScanner) count(d int) error {
	s.parts += d
	if s.parts > MaxKeyParts {
		return s.limit(fmt.Sprintf("more keys than a config may have: more than %d parts", MaxKeyParts),
			"each part of every key and [table] name counts its depth")
	}
	return nil
}

func (s *depthScanner) tooDeep() error {
	return s.limit(fmt.Sprintf("nested deeper than %d levels", s.max),
		"[table] names, dotted keys, arrays and inline tables each count one")
}

func (s *depthScanner) limit(reason, detail string) error {
	key := strings.Join(s.key, ".")
	if len(key) > 80 {
		key = key[:77] + "..."
	}
	if key == "" {
		key = "config"
	}
	return &LimitError{Line: s.line, Key: key, Reason: reason, Detail: detail}
}
