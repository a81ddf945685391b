package sagl

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/queryd/queryd/state"
)

// PlayersMode is how much a query shows of who is on.
type PlayersMode uint8

// The players modes of the spec.
const (
	PlayersList  PlayersMode = iota // "list": every player's id, name, score and ping (the default)
	PlayersCount                    // "count": only how many are on
	PlayersNone                     // "none": no "players" at all
)

// ParsePlayersMode maps "list", "count" and "none" (and "" for the default).
func ParsePlayersMode(s string) (PlayersMode, bool) {
	switch s {
	case "", "list":
		return PlayersList, true
	case "count":
		return PlayersCount, true
	case "none":
		return PlayersNone, true
	}
	return 0, false
}

// QueryVersion is the JSON's "query" field.
const QueryVersion = 1

// EncodeJSON returns the JSON a query returns for snap and logo (nil: no
// logo). In PlayersList mode the list stops before the entries would take
// more than maxList bytes (0: no limit), and the players object then carries
// "truncated": true.
func EncodeJSON(mode PlayersMode, maxList int, snap *state.Snapshot, logo *Logo) []byte {
	b := make([]byte, 0, 512+len(snap.Description)+64*len(snap.Players))
	b = append(b, `{"query":`...)
	b = strconv.AppendInt(b, QueryVersion, 10)
	b = appendKey(b, "name")
	b = appendString(b, snap.Name)
	b = appendKey(b, "version")
	b = appendString(b, snap.GameVersion)
	b = appendKey(b, "protocol")
	b = strconv.AppendInt(b, int64(snap.Protocol), 10)
	if mode != PlayersNone {
		b = appendPlayers(b, mode, maxList, snap)
	}
	b = appendBranding(b, snap.Branding, logo)
	b = appendOptional(b, snap)
	return append(b, '}')
}

func appendPlayers(b []byte, mode PlayersMode, maxList int, snap *state.Snapshot) []byte {
	b = append(b, `,"players":{"online":`...)
	b = strconv.AppendInt(b, int64(len(snap.Players)), 10)
	b = append(b, `,"max":`...)
	b = strconv.AppendInt(b, int64(snap.MaxPlayers), 10)
	if mode == PlayersList {
		b = append(b, `,"list":[`...)
		start, truncated := len(b), false
		for i := range snap.Players {
			mark := len(b)
			if i > 0 {
				b = append(b, ',')
			}
			b = appendPlayer(b, &snap.Players[i])
			if maxList > 0 && len(b)-start > maxList {
				b, truncated = b[:mark], true
				break
			}
		}
		b = append(b, ']')
		if truncated {
			b = append(b, `,"truncated":true`...)
		}
	}
	return append(b, '}')
}

func appendPlayer(b []byte, p *state.Player) []byte {
	b = append(b, `{"id":`...)
	b = strconv.AppendUint(b, uint64(p.ID), 10)
	b = append(b, `,"name":`...)
	b = appendString(b, p.Name)
	b = append(b, `,"score":`...)
	b = strconv.AppendInt(b, int64(p.Score), 10)
	b = append(b, `,"ping":`...)
	if p.Ping < 0 { // state.PingUnknown
		return append(b, `null}`...)
	}
	b = strconv.AppendInt(b, int64(p.Ping), 10)
	return append(b, '}')
}

func appendBranding(b []byte, br state.Branding, logo *Logo) []byte {
	b = append(b, `,"branding":{"logo":`...)
	if logo == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, `{"sha256":"`...)
		b = append(b, logo.Hex()...)
		b = append(b, `","size":`...)
		b = strconv.AppendInt(b, int64(len(logo.Data)), 10)
		b = append(b, '}')
	}
	b = appendKey(b, "primary")
	b = appendColour(b, br.Primary)
	b = appendKey(b, "secondary")
	b = appendColour(b, br.Secondary)
	b = append(b, `,"showName":`...)
	b = strconv.AppendBool(b, br.ShowName)
	return append(b, '}')
}

func appendColour(b []byte, c string) []byte {
	if c == "" {
		return append(b, "null"...)
	}
	return appendString(b, c)
}

// appendOptional appends the gamemode's fields the state sets.
func appendOptional(b []byte, snap *state.Snapshot) []byte {
	for _, f := range []struct{ key, val string }{
		{"description", snap.Description}, {"gamemode", snap.Gamemode}, {"language", snap.Language},
	} {
		if f.val != "" {
			b = appendKey(b, f.key)
			b = appendString(b, f.val)
		}
	}
	if len(snap.Tags) > 0 {
		b = append(b, `,"tags":[`...)
		for i, t := range snap.Tags {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, t)
		}
		b = append(b, ']')
	}
	if len(snap.Links) > 0 {
		b = append(b, `,"links":{`...)
		for i, l := range snap.Links {
			b = appendMember(b, i, l.Name)
			b = appendString(b, l.URL)
		}
		b = append(b, '}')
	}
	if len(snap.Values) > 0 {
		b = append(b, `,"values":{`...)
		for i, v := range snap.Values {
			b = appendMember(b, i, v.Key)
			b = appendValue(b, v.Value)
		}
		b = append(b, '}')
	}
	return b
}

func appendMember(b []byte, i int, key string) []byte {
	if i > 0 {
		b = append(b, ',')
	}
	b = appendString(b, key)
	return append(b, ':')
}

func appendValue(b []byte, v any) []byte {
	switch t := v.(type) {
	case string:
		return appendString(b, t)
	case json.Number:
		return append(b, t...)
	case bool:
		return strconv.AppendBool(b, t)
	}
	return append(b, "null"...)
}

func appendKey(b []byte, key string) []byte {
	b = append(b, ',', '"')
	b = append(b, key...)
	return append(b, '"', ':')
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string: UTF-8 kept as is, quotes,
// backslashes and control characters escaped, invalid UTF-8 replaced by
// U+FFFD, and U+2028/U+2029 escaped for JavaScript.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20 || c == 0x7F:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return append(b, '"')
}
