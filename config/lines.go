package config

import (
	"fmt"
	"strconv"
	"strings"
)

// The TOML decoder keeps a line for each key path but not for each table
// of an [[array of tables]] (the last one's wins), and says it only in its
// own errors. queryd check gives every error its line: keyLines reads the
// file once more, only for where each key is, and an Error takes the line
// of its key, or of the nearest key above it that the file has
// ("quake3.masters[1].heartbeat", else "quake3.masters[1]", else
// "quake3.masters").

// keyLines maps the keys and tables of a TOML text, written as errors
// write them (`listen.udp`, `listen.udp[1]`, `quake3.masters[0].address`,
// `server.players.1.name`, `feed."a.b"`), to the line each first appears
// on. It reads text the decoder accepted, as the depth scanner reads it.
func keyLines(data []byte) map[string]int {
	s := &lineScanner{depthScanner: depthScanner{data: data, line: 1}, lines: map[string]int{}, arrays: map[string]int{}}
	s.run()
	return s.lines
}

// lineFrame is one open array or inline table and the key it is at.
type lineFrame struct {
	key   string
	array bool
	n     int // an array's element being read
}

type lineScanner struct {
	depthScanner // data, i, line and the skip helpers
	lines        map[string]int
	arrays       map[string]int // [[array of tables]] → how many tables so far
	table        string         // the current [table], its arrays' positions resolved
	key          string         // the key whose value is being read
	frames       []lineFrame
	st           int
}

func (s *lineScanner) run() {
	for s.i < len(s.data) {
		c := s.data[s.i]
		switch c {
		case '\n', '\r':
			if c == '\n' {
				s.line++
			}
			s.i++
			if len(s.frames) == 0 {
				s.st = stKey
			}
			continue
		case ' ', '\t':
			s.i++
			continue
		case '#':
			s.skipComment()
			continue
		}
		switch s.st {
		case stKey:
			s.keyStart(c)
		case stValue:
			s.value(c)
		default:
			s.after(c)
		}
	}
}

// maxLineKey bounds the keys keyLines records: an error's key is never
// longer (a longer one takes the line of the nearest key above it).
const maxLineKey = 512

// note records key's line, unless it was seen before.
func (s *lineScanner) note(key string) {
	if _, ok := s.lines[key]; !ok && key != "" && len(key) <= maxLineKey {
		s.lines[key] = s.line
	}
}

func (s *lineScanner) top() *lineFrame {
	if len(s.frames) == 0 {
		return nil
	}
	return &s.frames[len(s.frames)-1]
}

// keyStart reads a [table] header, the '}' of an empty inline table, or a
// key and its '='.
func (s *lineScanner) keyStart(c byte) {
	top := s.top()
	switch {
	case c == '[' && top == nil:
		s.header()
		s.st = stAfter
		return
	case c == '}' && top != nil:
		s.pop()
		return
	}
	base := s.table
	if top != nil {
		base = top.key
	}
	s.key = s.keyPath(base)
	s.st = stValue
}

// header reads [a.b] or [[a.b]]: the new current table.
func (s *lineScanner) header() {
	s.i++
	array := s.i < len(s.data) && s.data[s.i] == '['
	if array {
		s.i++
	}
	var parts []string
	for {
		name, ok := s.name()
		if !ok {
			break
		}
		parts = append(parts, name)
		s.skipBlanks()
		if s.i >= len(s.data) || s.data[s.i] != '.' {
			break
		}
		s.i++
	}
	path := ""
	for i, p := range parts {
		path = joinKey(path, p)
		if i == len(parts)-1 && array {
			s.note(path)
			n := s.arrays[path]
			s.arrays[path] = n + 1
			path = fmt.Sprintf("%s[%d]", path, n)
		} else if n, ok := s.arrays[path]; ok { // a table under an array's last table
			path = fmt.Sprintf("%s[%d]", path, n-1)
		}
		s.note(path)
	}
	s.table = path
	for s.i < len(s.data) && s.data[s.i] == ']' {
		s.i++
	}
}

// keyPath reads a (dotted) key and its '=' under base, notes each part's
// path, and returns the whole key's.
func (s *lineScanner) keyPath(base string) string {
	key := base
	for {
		name, ok := s.name()
		if !ok {
			if s.i < len(s.data) && !strings.ContainsRune("\n\r=.", rune(s.data[s.i])) {
				s.i++ // not a key: skip it (the decoder rejected the file)
			}
		} else {
			key = joinKey(key, name)
			s.note(key)
		}
		s.skipBlanks()
		if s.i < len(s.data) && s.data[s.i] == '.' {
			s.i++
			continue
		}
		if s.i < len(s.data) && s.data[s.i] == '=' {
			s.i++
		}
		return key
	}
}

// name reads one part of a key or table name, bare or quoted, and returns
// it as errors write it (keyPart).
func (s *lineScanner) name() (string, bool) {
	s.skipBlanks()
	if s.i >= len(s.data) {
		return "", false
	}
	start := s.i
	switch c := s.data[s.i]; {
	case c == '"' || c == '\'':
		s.skipLineString(c)
		raw := string(s.data[start:s.i])
		if c == '\'' {
			return keyPart(strings.Trim(raw, "'")), true
		}
		if u, err := strconv.Unquote(raw); err == nil {
			return keyPart(u), true
		}
		return keyPart(strings.Trim(raw, `"`)), true
	case isBare(c):
		for s.i < len(s.data) && isBare(s.data[s.i]) {
			s.i++
		}
		return string(s.data[start:s.i]), true
	}
	return "", false
}

// value starts a value: an array, an inline table, a string or a scalar.
// An element of an array is noted as key[n].
func (s *lineScanner) value(c byte) {
	top := s.top()
	if (c == ']' && top != nil && top.array) || (c == '}' && top != nil && !top.array) {
		s.pop() // an empty array or inline table, or a trailing comma
		return
	}
	key := s.key
	if top != nil && top.array {
		key = fmt.Sprintf("%s[%d]", top.key, top.n)
		s.note(key)
	}
	switch c {
	case '[':
		s.i++
		s.frames = append(s.frames, lineFrame{key: key, array: true})
		return
	case '{':
		s.i++
		s.frames = append(s.frames, lineFrame{key: key})
		s.st = stKey
		return
	case '"', '\'':
		s.skipString()
	default:
		s.i++
	}
	s.st = stAfter
}

// after reads what follows a value.
func (s *lineScanner) after(c byte) {
	top := s.top()
	switch c {
	case ',':
		s.i++
		switch {
		case top == nil:
		case top.array:
			top.n++
			s.st = stValue
		default:
			s.st = stKey
		}
	case ']', '}':
		if top == nil {
			s.i++
		} else {
			s.pop()
		}
	case '"', '\'':
		s.skipString()
	default:
		s.i++
	}
}

func (s *lineScanner) pop() {
	s.i++
	s.frames = s.frames[:len(s.frames)-1]
	s.st = stAfter
}

// joinKey appends one part to a key path.
func joinKey(path, part string) string {
	if path == "" {
		return part
	}
	return path + "." + part
}

// lineOfKey is the line of key in lines, or of the nearest key above it
// that has one; 0 when none has.
func lineOfKey(lines map[string]int, key string) int {
	for key != "" {
		if n, ok := lines[key]; ok {
			return n
		}
		i := max(strings.LastIndexByte(key, '.'), strings.LastIndexByte(key, '['))
		if i <= 0 {
			return 0
		}
		key = key[:i]
	}
	return 0
}
