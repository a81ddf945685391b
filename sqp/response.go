package sqp

import (
	"encoding/binary"
	"encoding/json"
	"unicode/utf8"
)

// Response is a decoded query reply: the chunks that were asked for (nil
// when not asked).
type Response struct {
	Info    *ServerInfo `json:"server_info,omitempty"`
	Rules   []Rule      `json:"rules,omitempty"`
	Players *Table      `json:"players,omitempty"`
	Teams   *Table      `json:"teams,omitempty"`
	Metrics []byte      `json:"metrics,omitempty"` // the Metrics chunk's bytes (queryd sends none)
}

// ServerInfo is the ServerInfo chunk.
type ServerInfo struct {
	CurrentPlayers uint16 `json:"current_players"`
	MaxPlayers     uint16 `json:"max_players"`
	ServerName     string `json:"server_name"`
	GameType       string `json:"game_type"`
	BuildID        string `json:"build_id"`
	Map            string `json:"map"`
	Port           uint16 `json:"port"`
}

// Value is a typed value: Uint for the integer types, Str for String.
type Value struct {
	Type DataType
	Uint uint64
	Str  string
}

// MarshalJSON writes the value as a JSON number or string.
func (v Value) MarshalJSON() ([]byte, error) {
	if v.Type == String {
		return json.Marshal(v.Str)
	}
	return json.Marshal(v.Uint)
}

// Rule is one entry of the ServerRules chunk.
type Rule struct {
	Key   string `json:"key"`
	Value Value  `json:"value"`
}

// Field is one field of a PlayerInfo or TeamInfo header.
type Field struct {
	Name string   `json:"name"`
	Type DataType `json:"type"`
}

// Table is a PlayerInfo or TeamInfo chunk: its fields, and per row (player
// or team) one value per field.
type Table struct {
	Fields []Field   `json:"fields"`
	Rows   [][]Value `json:"rows"`
}

// Get returns row i's value of the field named name, and whether there is
// one.
func (t *Table) Get(i int, name string) (Value, bool) {
	for j, f := range t.Fields {
		if f.Name == name && i < len(t.Rows) {
			return t.Rows[i][j], true
		}
	}
	return Value{}, false
}

// reader decodes reply fields; the first error sticks.
type reader struct {
	b   []byte
	err error
}

func (r *reader) fixed(n int) []byte {
	if r.err == nil && len(r.b) < n {
		r.err = badAnswer("reply cut short")
	}
	if r.err != nil {
		return make([]byte, n)
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) u8() byte    { return r.fixed(1)[0] }
func (r *reader) u16() uint16 { return binary.BigEndian.Uint16(r.fixed(2)) }
func (r *reader) u32() uint32 { return binary.BigEndian.Uint32(r.fixed(4)) }

func (r *reader) str() string {
	s := r.fixed(int(r.u8()))
	if r.err == nil && !utf8.Valid(s) {
		r.err = badAnswer("string %q is not UTF-8", s)
	}
	return string(s)
}

func (r *reader) value(t DataType) Value {
	v := Value{Type: t}
	switch t {
	case Uint8:
		v.Uint = uint64(r.u8())
	case Uint16:
		v.Uint = uint64(r.u16())
	case Uint32:
		v.Uint = uint64(r.u32())
	case Uint64:
		v.Uint = binary.BigEndian.Uint64(r.fixed(8))
	case String:
		v.Str = r.str()
	default:
		if r.err == nil {
			r.err = badAnswer("unknown data type %d", t)
		}
	}
	return v
}

// chunk returns a reader over the next chunk (its u32 length first).
func (r *reader) chunk(name string) *reader {
	n := r.u32()
	if r.err == nil && uint64(n) > uint64(len(r.b)) {
		r.err = badAnswer("%s chunk of %d bytes, only %d left", name, n, len(r.b))
	}
	if r.err != nil {
		return &reader{err: r.err}
	}
	c := &reader{b: r.b[:n]}
	r.b = r.b[n:]
	return c
}

// ParseResponse decodes the chunks of a reassembled query reply's payload:
// those in chunks, in bit order. Bytes after a chunk's fields (fields of a
// later version) and after the last chunk are ignored, as the protocol
// asks; a chunk longer than the payload, a value cut short, an unknown data
// type or a string that is not UTF-8 is a *BadAnswerError.
func ParseResponse(payload []byte, chunks byte) (*Response, error) {
	r := &reader{b: payload}
	resp := &Response{}
	for _, c := range []struct {
		bit   byte
		name  string
		parse func(*reader)
	}{
		{ChunkServerInfo, "ServerInfo", func(c *reader) { resp.Info = parseInfo(c) }},
		{ChunkServerRules, "ServerRules", func(c *reader) { resp.Rules = parseRules(c) }},
		{ChunkPlayerInfo, "PlayerInfo", func(c *reader) { resp.Players = parseTable(c) }},
		{ChunkTeamInfo, "TeamInfo", func(c *reader) { resp.Teams = parseTable(c) }},
		{ChunkMetrics, "Metrics", func(c *reader) { resp.Metrics = append([]byte{}, c.b...) }},
	} {
		if chunks&c.bit == 0 {
			continue
		}
		ch := r.chunk(c.name)
		c.parse(ch)
		if ch.err != nil {
			return nil, ch.err
		}
	}
	return resp, nil
}

func parseInfo(r *reader) *ServerInfo {
	return &ServerInfo{
		CurrentPlayers: r.u16(), MaxPlayers: r.u16(),
		ServerName: r.str(), GameType: r.str(), BuildID: r.str(), Map: r.str(),
		Port: r.u16(),
	}
}

// parseRules reads key, type, value until the chunk ends.
func parseRules(r *reader) []Rule {
	rules := []Rule{}
	for r.err == nil && len(r.b) > 0 {
		k := r.str()
		rules = append(rules, Rule{Key: k, Value: r.value(DataType(r.u8()))})
	}
	return rules
}

// parseTable reads a row count, the field header (absent when there are no
// rows) and the rows.
func parseTable(r *reader) *Table {
	t := &Table{Fields: []Field{}, Rows: [][]Value{}}
	rows := int(r.u16())
	if rows == 0 || r.err != nil {
		return t
	}
	fields := int(r.u8())
	if fields == 0 && r.err == nil {
		r.err = badAnswer("%d rows without fields", rows)
	}
	for i := 0; i < fields && r.err == nil; i++ {
		name := r.str()
		t.Fields = append(t.Fields, Field{Name: name, Type: DataType(r.u8())})
	}
	for i := 0; i < rows && r.err == nil; i++ {
		row := make([]Value, len(t.Fields))
		for j, f := range t.Fields {
			row[j] = r.value(f.Type)
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}
