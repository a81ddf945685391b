package state

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	"github.com/queryd/queryd/internal/nearest"
)

// Native holds the state's protocol objects ("a2s", "gamespy4",
// "bedrock", "sqp", "sagl"): the values of one protocol's own replies that
// the common fields have no place for (A2S_INFO's app id, the Bedrock
// pong's server id, …). Each object's keys mirror the protocol's config
// section and override it for this state; only that protocol shows them
// (never as rules). [upstream] fills the polled protocol's object with the
// stock server's own values, so a front answers in the stock server's
// protocol what the stock server says. Every object also takes "other":
// what a polled answer said that no field can carry, kept as text and
// shown by no protocol. A nil object is unset.
type Native struct {
	A2S      *A2SFields
	GameSpy4 *GameSpy4Fields
	Bedrock  *BedrockFields
	SQP      *OtherFields
	SAGL     *OtherFields
}

// A2SFields is the "a2s" object: A2S_INFO's numbers, over [a2s]'s.
type A2SFields struct {
	AppID     int    // "app_id", 0-65535; -1 when unset ([a2s] app_id)
	Protocol  int    // "protocol", 0-255; -1 when unset ([a2s] protocol)
	GameID    uint64 // "game_id" (EDF); 0 is none
	HasGameID bool   // "game_id" is set (else [a2s] game_id)
	Other     []Rule // "other", sorted by key
}

// GameSpy4Fields is the "gamespy4" object: the full stat's vanilla keys
// that no common field gives, over [gamespy4]'s. A nil string is unset.
type GameSpy4Fields struct {
	GameType, GameID, Plugins, HostIP *string // "gametype", "game_id", "plugins", "hostip"
	Other                             []Rule  // "other", sorted by key
}

// BedrockFields is the "bedrock" object: the pong's fields that no common
// field gives, over [bedrock]'s.
type BedrockFields struct {
	Edition        string // "edition"; "" when unset ([bedrock] edition)
	Protocol       int    // "protocol", 0-9999999; -1 when unset ([bedrock] protocol)
	ServerID       uint64 // "server_id", the server GUID; 0 when unset (queryd's own)
	GameModeNumber int    // "game_mode_number", 0-255; -1 when unset ([bedrock] game_mode_number)
	IPv6Port       int    // "ipv6_port", 0-65535; -1 when unset ([bedrock] ipv6_port)
	Other          []Rule // "other", sorted by key
}

// OtherFields is a protocol object ("sqp", "sagl") that has only "other".
type OtherFields struct {
	Other []Rule // "other", sorted by key
}

// Limits of the protocol objects.
const (
	MaxBedrockProtocol = 9_999_999 // "bedrock" "protocol": 7 digits, as the pong's size assumes
	MaxGameModeNumber  = 255       // "bedrock" "game_mode_number"
	MaxGameSpy4Text    = 256       // "gamespy4" values, in characters
)

// nativeFields are the protocol objects' decoders, added to the
// document's fields (init, below).
var nativeFields = map[string]func(d *decoder, v any) error{
	"a2s":      (*decoder).a2s,
	"gamespy4": (*decoder).gamespy4,
	"bedrock":  (*decoder).bedrock,
	"sqp":      func(d *decoder, v any) (err error) { d.s.SQP, err = otherOnly(v, "sqp"); return },
	"sagl":     func(d *decoder, v any) (err error) { d.s.SAGL, err = otherOnly(v, "sagl"); return },
}

func init() {
	for k, f := range nativeFields {
		fields[k] = f
		fieldNames = append(fieldNames, k)
	}
	sort.Strings(fieldNames)
}

// members decodes the object v at path, calling each known key's decoder
// in key order; an unknown key is an error naming the nearest known one.
func members(v any, path string, known map[string]func(v any, path string) error) error {
	names := make([]string, 0, len(known))
	for k := range known {
		names = append(names, k)
	}
	sort.Strings(names)
	m, err := object(v, path, len(known))
	if err != nil {
		return err
	}
	for _, k := range sortedKeys(m) {
		f, ok := known[k]
		p := path + "." + k
		switch {
		case !ok:
			err = fieldErr(p, "unknown field%s", nearest.Hint(k, names))
		case m[k] == nil: // null: unset
		default:
			err = f(m[k], p)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (d *decoder) a2s(v any) error {
	a := &A2SFields{AppID: -1, Protocol: -1}
	err := members(v, "a2s", map[string]func(any, string) error{
		"app_id":   func(v any, p string) (err error) { a.AppID, err = d.intIn(v, p, 0, 65535); return },
		"protocol": func(v any, p string) (err error) { a.Protocol, err = d.intIn(v, p, 0, 255); return },
		"game_id": func(v any, p string) (err error) {
			a.GameID, err = uint64Of(v, p, "a game id")
			a.HasGameID = err == nil
			return
		},
		"other": func(v any, p string) (err error) { a.Other, err = other(v, p); return },
	})
	if err == nil {
		d.s.A2S = a
	}
	return err
}

func (d *decoder) gamespy4(v any) error {
	g := &GameSpy4Fields{}
	text := func(dst **string) func(any, string) error {
		return func(v any, p string) error {
			s, err := str(v, p, MaxGameSpy4Text)
			*dst = &s
			return err
		}
	}
	err := members(v, "gamespy4", map[string]func(any, string) error{
		"gametype": text(&g.GameType),
		"game_id":  text(&g.GameID),
		"plugins":  text(&g.Plugins),
		"hostip":   text(&g.HostIP),
		"other":    func(v any, p string) (err error) { g.Other, err = other(v, p); return },
	})
	if err == nil {
		d.s.GameSpy4 = g
	}
	return err
}

func (d *decoder) bedrock(v any) error {
	b := &BedrockFields{Protocol: -1, GameModeNumber: -1, IPv6Port: -1}
	err := members(v, "bedrock", map[string]func(any, string) error{
		"edition": func(v any, p string) (err error) {
			if b.Edition, err = str(v, p, 16); err == nil && b.Edition == "" {
				err = fieldErr(p, "empty (leave it out for [bedrock] edition)")
			}
			return
		},
		"protocol":         func(v any, p string) (err error) { b.Protocol, err = d.intIn(v, p, 0, MaxBedrockProtocol); return },
		"server_id":        func(v any, p string) (err error) { b.ServerID, err = uint64Of(v, p, "a server GUID"); return },
		"game_mode_number": func(v any, p string) (err error) { b.GameModeNumber, err = d.intIn(v, p, 0, MaxGameModeNumber); return },
		"ipv6_port":        func(v any, p string) (err error) { b.IPv6Port, err = d.intIn(v, p, 0, 65535); return },
		"other":            func(v any, p string) (err error) { b.Other, err = other(v, p); return },
	})
	if err == nil {
		d.s.Bedrock = b
	}
	return err
}

func otherOnly(v any, path string) (*OtherFields, error) {
	o := &OtherFields{}
	err := members(v, path, map[string]func(any, string) error{
		"other": func(v any, p string) (err error) { o.Other, err = other(v, p); return },
	})
	if err != nil {
		return nil, err
	}
	return o, nil
}

// other decodes a protocol object's "other": text by name, with the
// rules' limits.
func other(v any, path string) ([]Rule, error) {
	m, err := object(v, path, MaxRules)
	if err != nil {
		return nil, err
	}
	out := make([]Rule, 0, len(m))
	for _, k := range sortedKeys(m) {
		p := path + "." + k
		if err := checkKey(k, p, MaxRuleKeyLen); err != nil {
			return nil, err
		}
		s, err := str(m[k], p, MaxRuleValueLen)
		if err != nil {
			return nil, err
		}
		out = append(out, Rule{Key: k, Value: s})
	}
	return out, nil
}

// intIn is d.integer for a protocol object's member at path ("a2s.app_id").
func (d *decoder) intIn(v any, path string, lo, hi int64) (int, error) {
	n, err := d.integer(v, lo, hi, strings.Split(path, ".")...)
	return int(n), err
}

// uint64Of reads an unsigned 64-bit integer given as a number or as a
// string of digits (JSON numbers past 2^53 lose digits in many feeders).
func uint64Of(v any, path, what string) (uint64, error) {
	var s string
	switch t := v.(type) {
	case string:
		s = t
	case json.Number:
		s = string(t)
	default:
		return 0, fieldErr(path, "want %s as a string of digits, got %s", what, typeName(v))
	}
	id, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fieldErr(path, "want %s (an unsigned 64-bit integer), got %q", what, s)
	}
	return id, nil
}
