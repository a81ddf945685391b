package sqp

import (
	"encoding/binary"
	"math"
	"sort"
	"strconv"
	"unicode/utf8"

	"github.com/queryd/queryd/dgram"
	"github.com/queryd/queryd/state"
)

// Sizes of a query reply.
const (
	// MaxPacket is the most bytes of one reply datagram: 1,472, the UDP
	// payload of an unfragmented datagram on Ethernet, and what SQP clients
	// read (go-svrquery's DefaultMaxPacketSize).
	MaxPacket = 1472
	// HeaderLen is the size of a query reply's header: type, token,
	// version, current packet, last packet, payload length.
	HeaderLen = 11
	// MaxBody is the most chunk bytes one datagram carries.
	MaxBody = MaxPacket - HeaderLen
	// MaxReply is the most bytes one reply takes in all its datagrams: the
	// responder's scratch buffer (dgram.ScratchSize, 32 KiB), into which
	// every datagram is written because each carries the client's token.
	MaxReply = dgram.ScratchSize
	// MaxPackets is the most datagrams of one reply (22).
	MaxPackets = MaxReply / MaxPacket
	// MaxPayload is the most chunk bytes of one reply (32,142).
	MaxPayload = MaxPackets * MaxBody
	// MaxString is the most bytes of a string (its length is one byte).
	MaxString = 255
)

// DataType is the type byte of a rule's value or of a player field.
type DataType byte

// The data types; all integers are unsigned and big-endian.
const (
	Uint8 DataType = iota
	Uint16
	Uint32
	Uint64
	String
)

// Size returns the size of a fixed-size value, or -1 for String and
// unknown types.
func (t DataType) Size() int {
	if t > Uint64 {
		return -1
	}
	return 1 << t
}

// Fixed chunks: TeamInfo with no teams and no fields, and Metrics empty.
var (
	teamChunk    = []byte{0, 0, 0, 3, 0, 0, 0}
	metricsChunk = []byte{0, 0, 0, 0}
)

// playerFields is the PlayerInfo field header: three fields, name (string),
// score (uint32: the int32 score's two's complement bits) and ping
// (uint16, milliseconds).
var playerFields = []byte("\x03\x04name\x04\x05score\x02\x04ping\x01")

// cut returns s cut to at most MaxString bytes at a UTF-8 boundary.
func cut(s string) string {
	if len(s) <= MaxString {
		return s
	}
	n := MaxString
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// appendString appends s, cut to MaxString bytes, behind its length byte.
func appendString(b []byte, s string) []byte {
	s = cut(s)
	b = append(b, byte(len(s)))
	return append(b, s...)
}

// RuleType returns the type a rule value is sent as: "true" and "false" as
// Uint8 (1 and 0); a non-negative integer written plainly (digits only, no
// sign, no leading zero) as the smallest of Uint16, Uint32 and Uint64 that
// holds it; anything else as String. Uint8 is kept for booleans so that
// clients can tell them from numbers.
func RuleType(v string) (DataType, uint64) {
	switch v {
	case "true":
		return Uint8, 1
	case "false":
		return Uint8, 0
	}
	if v == "" || v[0] < '0' || v[0] > '9' || v[0] == '0' && len(v) > 1 {
		return String, 0
	}
	n, err := strconv.ParseUint(v, 10, 64)
	switch {
	case err != nil:
		return String, 0
	case n <= math.MaxUint16:
		return Uint16, n
	case n <= math.MaxUint32:
		return Uint32, n
	}
	return Uint64, n
}

// appendValue appends a rule value: its type byte, then the value.
func appendValue(b []byte, v string) []byte {
	t, n := RuleType(v)
	b = append(b, byte(t))
	switch t {
	case Uint8:
		return append(b, byte(n))
	case Uint16:
		return binary.BigEndian.AppendUint16(b, uint16(n))
	case Uint32:
		return binary.BigEndian.AppendUint32(b, uint32(n))
	case Uint64:
		return binary.BigEndian.AppendUint64(b, n)
	}
	return appendString(b, v)
}

// clamp16 returns n within 0 to 65535.
func clamp16(n int) uint16 { return uint16(min(max(n, 0), math.MaxUint16)) }

// encodeInfo returns the ServerInfo chunk, its length first.
func encodeInfo(cfg Config, snap *state.Snapshot) []byte {
	gameType := snap.Gamemode
	if gameType == "" {
		gameType = cfg.GameType
	}
	port := snap.GamePort
	if port == 0 {
		port = cfg.GamePort
	}
	b := make([]byte, 8, 16+len(snap.Name)+len(gameType)+len(snap.GameVersion)+len(snap.Map))
	binary.BigEndian.PutUint16(b[4:], clamp16(len(snap.Players)))
	binary.BigEndian.PutUint16(b[6:], clamp16(snap.MaxPlayers))
	b = appendString(b, snap.Name)
	b = appendString(b, gameType)
	b = appendString(b, snap.GameVersion)
	b = appendString(b, snap.Map)
	b = binary.BigEndian.AppendUint16(b, port)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// records is a list of encoded records back to back (rules or players),
// and where each ends, so that any prefix of the list can be sent.
type records struct {
	b    []byte
	ends []int
}

// fit returns how many records fit in room bytes, and their size.
func (r *records) fit(room int) (n, size int) {
	n = sort.Search(len(r.ends), func(i int) bool { return r.ends[i] > room })
	if n > 0 {
		size = r.ends[n-1]
	}
	return n, size
}

// lastEnd returns the end of the last record, 0 when there is none.
func (r *records) lastEnd() int {
	if len(r.ends) == 0 {
		return 0
	}
	return r.ends[len(r.ends)-1]
}

// done records the end of the record just appended, and reports whether
// the list is full: a record that would take it past MaxPayload bytes (no
// reply can carry more) is taken back.
func (r *records) done() bool {
	if len(r.b) > MaxPayload {
		r.b = r.b[:r.lastEnd()]
		return true
	}
	r.ends = append(r.ends, len(r.b))
	return false
}

// newRecords makes a list with room for the records whose sizes size
// returns, from the first, as far as MaxPayload bytes reach: one
// allocation each for the bytes and the ends.
func newRecords(n int, size func(i int) int) records {
	total, count := 0, 0
	for i := 0; i < n && total <= MaxPayload; i++ {
		total += size(i)
		count++
	}
	return records{b: make([]byte, 0, total), ends: make([]int, 0, count)}
}

// encodeRules returns the rules' records (key, type, value), in key order,
// as many as one reply can carry. Rules whose key is longer than MaxString
// bytes are left out (a cut key would be another key); values are cut.
func encodeRules(rules []state.Rule) records {
	r := newRecords(len(rules), func(i int) int { return len(rules[i].Key) + len(cut(rules[i].Value)) + 11 })
	for _, rule := range rules {
		if len(rule.Key) > MaxString {
			continue
		}
		r.b = appendString(r.b, rule.Key)
		r.b = appendValue(r.b, rule.Value)
		if r.done() {
			break
		}
	}
	return r
}

// encodePlayers returns the players' records (name, score, ping), in the
// state's order, as many as one reply can carry. A negative score is sent
// as the uint32 of its two's complement bits (-1 is 4294967295); an
// unknown ping (state.PingUnknown) as 0.
func encodePlayers(players []state.Player) records {
	r := newRecords(len(players), func(i int) int { return len(cut(players[i].Name)) + 7 })
	for _, p := range players {
		r.b = appendString(r.b, p.Name)
		r.b = binary.BigEndian.AppendUint32(r.b, uint32(p.Score))
		r.b = binary.BigEndian.AppendUint16(r.b, clamp16(int(p.Ping))) // state.PingUnknown is 0
		if r.done() {
			break
		}
	}
	return r
}
