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
// types and limits, and notes the values it accepts in another form than
// they were given (fixes): integers written as floats ("3.0"), unknown
// pings, text cut to its limit.
type decoder struct {
	s     *Snapshot
	fixes []fix
}

var colourRE = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

// fields maps every top-level document key to its decoder. Unknown keys are
// errors. Text shown to people is cut to its limit (d.text); names that
// identify something (folder, keys, ids, URLs, paths, colours) are refused
// when too long (str): a cut one would name something else.
var fields = map[string]func(d *decoder, v any) error{
	"name":     func(d *decoder, v any) (err error) { d.s.Name, err = d.text(v, MaxNameLen, "name"); return },
	"map":      func(d *decoder, v any) (err error) { d.s.Map, err = d.text(v, MaxShortLen, "map"); return },
	"game":     func(d *decoder, v any) (err error) { d.s.Game, err = d.text(v, MaxShortLen, "game"); return },
	"folder":   func(d *decoder, v any) (err error) { d.s.Folder, err = str(v, "folder", MaxShortLen); return },
	"version":  func(d *decoder, v any) (err error) { d.s.GameVersion, err = d.text(v, MaxShortLen, "version"); return },
	"keywords": func(d *decoder, v any) (err error) { d.s.Keywords, err = d.text(v, MaxShortLen, "keywords"); return },
	"gamemode": func(d *decoder, v any) (err error) { d.s.Gamemode, err = d.text(v, MaxShortLen, "gamemode"); return },
	"language": func(d *decoder, v any) (err error) { d.s.Language, err = d.text(v, MaxLanguageLen, "language"); return },
	"description": func(d *decoder, v any) (err error) {
		d.s.Description, err = d.text(v, MaxDescription, "description")
		return
	},
	"password": func(d *decoder, v any) (err error) { d.s.Password, err = boolean(v, "password"); return },
	"vac":      func(d *decoder, v any) (err error) { d.s.VAC, err = boolean(v, "vac"); return },
	"max_players": func(d *decoder, v any) error {
		n, err := d.integer(v, 0, MaxMaxPlayers, "max_players")
		d.s.MaxPlayers = int(n)
		return err
	},
	"protocol": func(d *decoder, v any) error {
		n, err := d.integer(v, 0, math.MaxInt32, "protocol")
		d.s.Protocol = int(n)
		return err
	},
	"game_port": func(d *decoder, v any) error {
		n, err := d.integer(v, 0, 65535, "game_port")
		d.s.GamePort = uint16(n)
		return err
	},
	"steam_id": func(d *decoder, v any) (err error) { d.s.SteamID, err = d.steamID(v); return },
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
// version). It returns the first error, in key order, or the fixes sorted
// by path.
func decodeDocument(doc map[string]any, s *Snapshot) ([]fix, error) {
	errs, fixes := decodeFields(doc, s, 1)
	if len(errs) > 0 {
		return nil, errs[0]
	}
	return fixes, nil
}

// decodeFields decodes doc's top-level fields in key order (so the same
// errors come every time) and returns the first error of each failing field,
// stopping after max of them (0: no limit), and the fixes of the fields it
// accepted, sorted by path.
func decodeFields(doc map[string]any, s *Snapshot, max int) ([]error, []fix) {
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
			n := len(d.fixes)
			if err = f(d, doc[k]); err != nil {
				d.fixes = d.fixes[:n] // a refused field fixes nothing
			}
		}
		if err != nil {
			if errs = append(errs, err); len(errs) == max {
				break
			}
		}
	}
	sortFixes(d.fixes)
	return errs, d.fixes
}

// str returns v as a string of at most max characters: a longer one is
// refused (for names that identify something; text shown to people is cut
// by decoder.text).
func str(v any, path string, max int) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", fieldErr(path, "want a string, got %s", typeName(v))
	}
	if n := utf8.RuneCountInString(s); n > max {
		return "", fieldErr(path, "too long: %d characters, at most %d", n, max)
	}
	if r := badText(s); r != "" {
		return "", fieldErr(path, "%s", r)
	}
	return s, nil
}

// text returns v, a string shown to people, cut to max characters on a
// character boundary when it is longer; the cut is a fix with a warning.
// NUL characters and invalid UTF-8 are refused.
func (d *decoder) text(v any, max int, path ...string) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", fieldErr(join(path), "want a string, got %s", typeName(v))
	}
	if r := badText(s); r != "" {
		return "", fieldErr(join(path), "%s", r)
	}
	cut, was := cutText(s, max)
	if was > 0 {
		d.note(cut, fmt.Sprintf("cut to %d characters (was %d)", max, was), path...)
	}
	return cut, nil
}

func boolean(v any, path string) (bool, error) {
	b, ok := v.(bool)
	if !ok {
		return false, fieldErr(path, "want true or false, got %s", typeName(v))
	}
	return b, nil
}

// integer returns v, a JSON number that is an integer from min to max.
// An integral float (3.0, 3e0: what json.dumps(3.0) writes) is that
// integer, and the document keeps it as the integer (a silent fix).
func (d *decoder) integer(v any, min, max int64, path ...string) (int64, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, fieldErr(join(path), "want an integer, got %s", typeName(v))
	}
	in, ok := parseIntegral(string(n))
	i, inRange := in.in(min, max)
	if !ok || !inRange {
		return 0, fieldErr(join(path), "want an integer from %d to %d, got %s", min, max, shown(n))
	}
	if !in.plain {
		d.note(json.Number(strconv.FormatInt(i, 10)), "", path...)
	}
	return i, nil
}

// ping returns a player's ping: an integer from 0 to 65535, or any
// negative integer, which means unknown (PingUnknown; the document keeps
// it as -1).
func (d *decoder) ping(v any, path ...string) (int32, error) {
	if n, ok := v.(json.Number); ok {
		if in, ok := parseIntegral(string(n)); ok && in.neg {
			if n != "-1" {
				d.note(json.Number("-1"), "", path...)
			}
			return PingUnknown, nil
		}
	}
	i, err := d.integer(v, 0, 65535, path...)
	if err != nil {
		err.(*FieldError).Reason += " (or a negative one: unknown)"
	}
	return int32(i), err
}

// shown is a number as an error quotes it: at most 40 bytes of it.
func shown(n json.Number) string {
	if len(n) > 40 {
		return string(n[:40]) + "…"
	}
	return string(n)
}

// join is a path's elements as a FieldError names them.
func join(path []string) string { return strings.Join(path, ".") }

func number(v any, path string, min, max float64) (float64, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, fieldErr(path, "want a number, got %s", typeName(v))
	}
	f, err := n.Float64()
	if err != nil || math.IsNaN(f) || f < min || f > max {
		return 0, fieldErr(path, "want a number from %g to %g, got %s", min, max, shown(n))
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

// unknownField is the reason for an unknown key k of an object whose keys
// are known: the nearest known one, else the list.
func unknownField(k string, known []string) string {
	if h := nearest.Hint(k, known); h != "" {
		return "unknown field" + h
	}
	return "unknown field (want " + strings.Join(known, ", ") + ")"
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

// steamID takes a SteamID64 as a string of digits or as a number (an
// integral float is its integer, kept as the integer).
func (d *decoder) steamID(v any) (uint64, error) {
	const want = "want a SteamID64 (an unsigned 64-bit integer)"
	switch t := v.(type) {
	case json.Number:
		in, ok := parseIntegral(string(t))
		id, ok2 := in.uint()
		if !ok || !ok2 {
			return 0, fieldErr("steam_id", "%s, got %s", want, shown(t))
		}
		if !in.plain {
			d.note(json.Number(strconv.FormatUint(id, 10)), "", "steam_id")
		}
		return id, nil
	case string:
		id, err := strconv.ParseUint(t, 10, 64)
		if err != nil {
			return 0, fieldErr("steam_id", "%s, got %q", want, t)
		}
		return id, nil
	}
	return 0, fieldErr("steam_id", "want a SteamID64 as a string of digits, got %s", typeName(v))
}

// sourceTVFields are the fields of "sourcetv".
var sourceTVFields = []string{"name", "port"}

func (d *decoder) sourceTV(v any) error {
	m, err := object(v, "sourcetv", 2)
	if err != nil {
		return err
	}
	tv := &SourceTV{}
	for _, k := range sortedKeys(m) {
		switch k {
		case "port":
			n, err := d.integer(m[k], 1, 65535, "sourcetv", "port")
			if err != nil {
				return err
			}
			tv.Port = uint16(n)
		case "name":
			if tv.Name, err = d.text(m[k], MaxShortLen, "sourcetv", "name"); err != nil {
				return err
			}
		default:
			return fieldErr("sourcetv."+k, "%s", unknownField(k, sourceTVFields))
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
	for k, pv := range m { // map order: errors are found again in key order
		p, err := d.player(k, pv, false)
		if err != nil {
			return firstPlayerError(m)
		}
		d.s.Players = append(d.s.Players, p)
	}
	return nil
}

// firstPlayerError finds the error of the first bad player in key order,
// and in it the first bad field in key order, so that the same document
// always reports the same error.
func firstPlayerError(m map[string]any) error {
	scratch := &decoder{s: &Snapshot{}}
	for _, k := range sortedKeys(m) {
		if _, err := scratch.player(k, m[k], true); err != nil {
			return err
		}
	}
	return nil
}

// player decodes one entry of "players". Its optional "time" is checked
// here and turned into Since by the Store. It looks at the fields in
// playerFields' order, or with sorted in key order (to report the first
// error); either way paths are made only for an error or a fix, so a valid
// player costs no allocation but its own.
func (d *decoder) player(key string, v any, sorted bool) (Player, error) {
	id, err := strconv.ParseUint(key, 10, 32)
	if err != nil || key == "" || key[0] == '+' || (len(key) > 1 && key[0] == '0') {
		return Player{}, fieldErr("players."+key, "player ids are decimal integers from 0 to %d without leading zeros", uint64(MaxPlayerID))
	}
	m, ok := v.(map[string]any)
	if !ok || len(m) > len(playerFields) {
		_, err := object(v, "players."+key, len(playerFields))
		return Player{}, err
	}
	p := Player{ID: uint32(id)}
	keys := playerFields[:]
	if sorted {
		keys = sortedKeys(m)
	} else if len(m) > countKnown(m) {
		return Player{}, fieldErr("players."+key, "unknown field") // found again in key order
	}
	for _, k := range keys {
		fv, ok := m[k]
		if !ok {
			continue
		}
		var n int64
		switch k {
		case "name":
			p.Name, err = d.text(fv, MaxPlayerName, "players", key, k)
		case "score":
			n, err = d.integer(fv, math.MinInt32, math.MaxInt32, "players", key, k)
			p.Score = int32(n)
		case "ping":
			p.Ping, err = d.ping(fv, "players", key, k)
		case "bot":
			if p.Bot, ok = fv.(bool); !ok {
				_, err = boolean(fv, "players."+key+"."+k)
			}
		case "time":
			_, err = number(fv, "players."+key+"."+k, 0, MaxPlayerTime)
		default:
			err = fieldErr("players."+key+"."+k, "%s", unknownField(k, playerFieldList))
		}
		if err != nil {
			return Player{}, err
		}
	}
	return p, nil
}

// playerFields are the fields a player may have, in the order they are
// decoded.
var playerFields = [...]string{"name", "score", "ping", "bot", "time"}

// playerFieldList is playerFields as the list an unknown field names.
var playerFieldList = playerFields[:]

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
			val, err = d.text(t, MaxRuleValueLen, "rules", k)
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

// checkKey refuses a key that is empty, too long (a cut key could be
// another key), or not text.
func checkKey(k, path string, max int) error {
	if k == "" {
		return fieldErr(path, "empty key")
	}
	if n := utf8.RuneCountInString(k); n > max {
		return fieldErr(path, "key too long: %d characters, at most %d", n, max)
	}
	if r := badText(k); r != "" {
		return fieldErr(path, "key %s", r)
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
		val := m[k]
		switch t := val.(type) {
		case string:
			if val, err = d.text(t, MaxValueLen, "values", k); err != nil {
				return err
			}
		case json.Number, bool, nil:
		default:
			return fieldErr(path, "want a string, number, boolean or null, got %s", typeName(t))
		}
		d.s.Values = append(d.s.Values, Value{Key: k, Value: val})
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
		s, err := d.text(t, MaxTagLen, "tags", strconv.Itoa(i))
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

// brandingFields are the fields of "branding".
var brandingFields = []string{"logo", "primary", "secondary", "show_name"}

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
			err = fieldErr(path, "%s", unknownField(k, brandingFields))
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
