package state

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/queryd/queryd/internal/nearest"
)

// FieldError is a rejected field of the state document: Path names it
// ("players.3.score") and Reason says what is wrong.
type FieldError struct {
	Path   string
	Reason string
}

func (e *FieldError) Error() string { return e.Path + ": " + e.Reason }

func fieldErr(path, format string, args ...any) error {
	return &FieldError{Path: path, Reason: fmt.Sprintf(format, args...)}
}

// decoder turns a generic JSON document into a Snapshot's fields, checking
// types and limits. It stops at the first error.
type decoder struct {
	s *Snapshot
}

var colourRE = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

// fields maps every top-level document key to its decoder. Unknown keys are errors.
var fields = map[string]func(d *decoder, v any) error{
	"name":     func(d *decoder, v any) (err error) { d.s.Name, err = str(v, "name", MaxNameLen); return },
	"map":      func(d *decoder, v any) (err error) { d.s.Map, err = str(v, "map", MaxShortLen); return },
	"game":     func(d *decoder, v any) (err error) { d.s.Game, err = str(v, "game", MaxShortLen); return },
	"folder":   func(d *decoder, v any) (err error) { d.s.Folder, err = str(v, "folder", MaxShortLen); return },
	"version":  func(d *decoder, v any) (err error) { d.s.GameVersion, err = str(v, "version", MaxShortLen); return },
	"keywords": func(d *decoder, v any) (err error) { d.s.Keywords, err = str(v, "keywords", MaxShortLen); return },
	"gamemode": func(d *decoder, v any) (err error) { d.s.Gamemode, err = str(v, "gamemode", MaxShortLen); return },
	"language": func(d *decoder, v any) (err error) { d.s.Language, err = str(v, "language", MaxLanguageLen); return },
	"description": func(d *decoder, v any) (err error) {
		d.s.Description, err = str(v, "description", MaxDescription)
		return
	},
	"password": func(d *decoder, v any) (err error) { d.s.Password, err = boolean(v, "password"); return },
	"vac":      func(d *decoder, v any) (err error) { d.s.VAC, err = boolean(v, "vac"); return },
	"max_players": func(d *decoder, v any) error {
		n, err := integer(v, "max_players", 0, MaxMaxPlayers)
		d.s.MaxPlayers = int(n)
		return err
	},
	"protocol": func(d *decoder, v any) error {
		n, err := integer(v, "protocol", 0, math.MaxInt32)
		d.s.Protocol = int(n)
		return err
	},
	"game_port": func(d *decoder, v any) error {
		n, err := integer(v, "game_port", 0, 65535)
		d.s.GamePort = uint16(n)
		return err
	},
	"steam_id": func(d *decoder, v any) (err error) { d.s.SteamID, err = steamID(v); return },
	"server_type": func(d *decoder, v any) (err error) {
		d.s.ServerType, err = oneOf(v, "server_type", "dedicated", "listen", "proxy")
		return
	},
	"environment": func(d *decoder, v any) (err error) {
		d.s.OS, err = oneOf(v, "environment", "linux", "windows", "mac")
		return
	},
	"sourcetv": (*decoder).sourceTV,
	"players":  (*decoder).players,
	"rules":    (*decoder).rules,
	"values":   (*decoder).values,
	"tags":     (*decoder).tags,
	"links":    (*decoder).links,
	"branding": (*decoder).branding,
}

// decodeDocument validates doc and fills s (all but players' Since and the
// version). It returns the first error, in key order.
func decodeDocument(doc map[string]any, s *Snapshot) error {
	if errs := decodeFields(doc, s, 1); len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// decodeFields decodes doc's top-level fields in key order (so the same
// errors come every time) and returns the first error of each failing field,
// stopping after max of them (0: no limit).
func decodeFields(doc map[string]any, s *Snapshot, max int) []error {
	d := &decoder{s: s}
	s.ServerType, s.OS = "dedicated", "linux"
	var errs []error
	for _, k := range sortedKeys(doc) {
		f, ok := fields[k]
		var err error
		switch {
		case !ok:
			err = fieldErr(k, "unknown field%s", nearest.Hint(k, fieldNames))
		case doc[k] == nil: // null: the field's default
		default:
			err = f(d, doc[k])
		}
		if err != nil {
			if errs = append(errs, err); len(errs) == max {
				break
			}
		}
	}
	return errs
}

func str(v any, path string, max int) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", fieldErr(path, "want a string, got %s", typeName(v))
	}
	if n := utf8.RuneCountInString(s); n > max {
		return "", fieldErr(path, "too long: %d characters, at most %d", n, max)
	}
	if strings.IndexByte(s, 0) >= 0 {
		return "", fieldErr(path, "contains a NUL character")
	}
	return s, nil
}

func boolean(v any, path string) (bool, error) {
	b, ok := v.(bool)
	if !ok {
		return false, fieldErr(path, "want true or false, got %s", typeName(v))
	}
	return b, nil
}

func integer(v any, path string, min, max int64) (int64, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, fieldErr(path, "want an integer, got %s", typeName(v))
	}
	i, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil || i < min || i > max {
		return 0, fieldErr(path, "want an integer from %d to %d, got %s", min, max, n)
	}
	return i, nil
}

func number(v any, path string, min, max float64) (float64, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, fieldErr(path, "want a number, got %s", typeName(v))
	}
	f, err := n.Float64()
	if err != nil || math.IsNaN(f) || f < min || f > max {
		return 0, fieldErr(path, "want a number from %g to %g, got %s", min, max, n)
	}
	return f, nil
}

func oneOf(v any, path string, allowed ...string) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", fieldErr(path, "want a string, got %s", typeName(v))
	}
	for _, a := range allowed {
		if s == a {
			return s, nil
		}
	}
	return "", fieldErr(path, "want one of %s, got %q", strings.Join(allowed, ", "), s)
}

func object(v any, path string, max int) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fieldErr(path, "want an object, got %s", typeName(v))
	}
	if len(m) > max {
		return nil, fieldErr(path, "too many entries: %d, at most %d", len(m), max)
	}
	return m, nil
}

// fieldNames are the document's top-level keys, sorted: the names an
// unknown one is compared with.
var fieldNames = func() []string {
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}()

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func steamID(v any) (uint64, error) {
	var s string
	switch t := v.(type) {
	case json.Number:
		s = string(t)
	case string:
		s = t
	default:
		return 0, fieldErr("steam_id", "want a SteamID64 as a string of digits, got %s", typeName(v))
	}
	id, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fieldErr("steam_id", "want a SteamID64 (an unsigned 64-bit integer), got %q", s)
	}
	return id, nil
}

func (d *decoder) sourceTV(v any) error {
	m, err := object(v, "sourcetv", 2)
	if err != nil {
		return err
	}
	tv := &SourceTV{}
	for _, k := range sortedKeys(m) {
		switch k {
		case "port":
			n, err := integer(m[k], "sourcetv.port", 1, 65535)
			if err != nil {
				return err
			}
			tv.Port = uint16(n)
		case "name":
			if tv.Name, err = str(m[k], "sourcetv.name", MaxShortLen); err != nil {
				return err
			}
		default:
			return fieldErr("sourcetv."+k, "unknown field")
		}
	}
	if tv.Port == 0 {
		return fieldErr("sourcetv.port", "required when sourcetv is set")
	}
	d.s.SourceTV = tv
	return nil
}

func (d *decoder) players(v any) error {
	m, err := object(v, "players", MaxPlayers)
	if err != nil {
		return err
	}
	d.s.Players = make([]Player, 0, len(m))
	for k, pv := range m { // fast path: map order, no error paths built
		p, err := decodePlayer(k, pv, false)
		if err != nil {
			return firstPlayerError(m)
		}
		d.s.Players = append(d.s.Players, p)
	}
	return nil
}

// firstPlayerError finds the error of the first bad player in key order,
// with its full path, so the same document always reports the same error.
func firstPlayerError(m map[string]any) error {
	for _, k := range sortedKeys(m) {
		if _, err := decodePlayer(k, m[k], true); err != nil {
			return err
		}
	}
	return nil
}

// decodePlayer decodes one entry of "players". Its optional "time" is
// checked here and turned into Since by the Store. With paths false, the
// error carries no path (the fast path for valid documents); callers decode
// again with paths true to report it.
func decodePlayer(key string, v any, paths bool) (Player, error) {
	path := ""
	if paths {
		path = "players." + key
	}
	id, err := strconv.ParseUint(key, 10, 32)
	if err != nil || key == "" || key[0] == '+' || (len(key) > 1 && key[0] == '0') {
		return Player{}, fieldErr(path, "player ids are decimal integers from 0 to %d without leading zeros", uint64(MaxPlayerID))
	}
	m, err := object(v, path, 5)
	if err != nil {
		return Player{}, err
	}
	p := Player{ID: uint32(id)}
	keys := playerFields[:]
	if paths {
		keys = sortedKeys(m)
	} else if len(m) > countKnown(m) {
		return Player{}, fieldErr("", "unknown field")
	}
	for _, k := range keys {
		fv, ok := m[k]
		if !ok {
			continue
		}
		fp := ""
		if paths {
			fp = path + "." + k
		}
		var n int64
		switch k {
		case "name":
			p.Name, err = str(fv, fp, MaxPlayerName)
		case "score":
			n, err = integer(fv, fp, math.MinInt32, math.MaxInt32)
			p.Score = int32(n)
		case "ping":
			n, err = integer(fv, fp, 0, 65535)
			p.Ping = int32(n)
		case "bot":
			p.Bot, err = boolean(fv, fp)
		case "time":
			_, err = number(fv, fp, 0, MaxPlayerTime)
		default:
			err = fieldErr(fp, "unknown field (want name, score, ping, time, bot)")
		}
		if err != nil {
			return Player{}, err
		}
	}
	return p, nil
}

// playerFields are the fields a player may have.
var playerFields = [...]string{"name", "score", "ping", "bot", "time"}

// countKnown returns how many of m's keys are player fields.
func countKnown(m map[string]any) int {
	n := 0
	for _, k := range playerFields {
		if _, ok := m[k]; ok {
			n++
		}
	}
	return n
}

func (d *decoder) rules(v any) error {
	m, err := object(v, "rules", MaxRules)
	if err != nil {
		return err
	}
	d.s.Rules = make([]Rule, 0, len(m))
	for _, k := range sortedKeys(m) {
		path := "rules." + k
		if err := checkKey(k, path, MaxRuleKeyLen); err != nil {
			return err
		}
		var val string
		switch t := m[k].(type) {
		case string:
			val, err = str(t, path, MaxRuleValueLen)
		case json.Number:
			val = string(t)
		case bool:
			val = strconv.FormatBool(t)
		default:
			err = fieldErr(path, "want a string, number or boolean, got %s", typeName(t))
		}
		if err != nil {
			return err
		}
		d.s.Rules = append(d.s.Rules, Rule{Key: k, Value: val})
	}
	return nil
}

func checkKey(k, path string, max int) error {
	if k == "" {
		return fieldErr(path, "empty key")
	}
	if n := utf8.RuneCountInString(k); n > max {
		return fieldErr(path, "key too long: %d characters, at most %d", n, max)
	}
	if strings.IndexByte(k, 0) >= 0 {
		return fieldErr(path, "key contains a NUL character")
	}
	return nil
}

func (d *decoder) values(v any) error {
	m, err := object(v, "values", MaxValues)
	if err != nil {
		return err
	}
	d.s.Values = make([]Value, 0, len(m))
	for _, k := range sortedKeys(m) {
		path := "values." + k
		if err := checkKey(k, path, MaxValueKeyLen); err != nil {
			return err
		}
		switch t := m[k].(type) {
		case string:
			if _, err := str(t, path, MaxValueLen); err != nil {
				return err
			}
		case json.Number, bool, nil:
		default:
			return fieldErr(path, "want a string, number, boolean or null, got %s", typeName(t))
		}
		d.s.Values = append(d.s.Values, Value{Key: k, Value: m[k]})
	}
	return nil
}

func (d *decoder) tags(v any) error {
	a, ok := v.([]any)
	if !ok {
		return fieldErr("tags", "want an array of strings, got %s", typeName(v))
	}
	if len(a) > MaxTags {
		return fieldErr("tags", "too many tags: %d, at most %d", len(a), MaxTags)
	}
	d.s.Tags = make([]string, len(a))
	for i, t := range a {
		s, err := str(t, fmt.Sprintf("tags.%d", i), MaxTagLen)
		if err != nil {
			return err
		}
		d.s.Tags[i] = s
	}
	return nil
}

func (d *decoder) links(v any) error {
	m, err := object(v, "links", MaxLinks)
	if err != nil {
		return err
	}
	for _, k := range sortedKeys(m) {
		path := "links." + k
		if err := checkKey(k, path, MaxLinkNameLen); err != nil {
			return err
		}
		s, err := str(m[k], path, MaxURLLen)
		if err != nil {
			return err
		}
		u, perr := url.Parse(s)
		if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fieldErr(path, "want an http(s) URL, got %q", s)
		}
		d.s.Links = append(d.s.Links, Link{Name: k, URL: s})
	}
	return nil
}

func (d *decoder) branding(v any) error {
	m, err := object(v, "branding", 4)
	if err != nil {
		return err
	}
	b := &d.s.Branding
	for _, k := range sortedKeys(m) {
		path := "branding." + k
		switch k {
		case "primary", "secondary":
			var c string
			if m[k] != nil {
				if c, err = str(m[k], path, 7); err == nil && !colourRE.MatchString(c) {
					err = fieldErr(path, "want a colour \"#rrggbb\" or null, got %q", c)
				}
			}
			if k == "primary" {
				b.Primary = strings.ToLower(c)
			} else {
				b.Secondary = strings.ToLower(c)
			}
		case "show_name":
			b.ShowName, err = boolean(m[k], path)
		case "logo":
			if m[k] != nil {
				b.Logo, err = str(m[k], path, MaxPathLen)
			}
		default:
			err = fieldErr(path, "unknown field (want primary, secondary, show_name, logo)")
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
