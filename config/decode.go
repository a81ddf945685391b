package config

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/netip"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/queryd/queryd/internal/nearest"
)

// keyDecoder is a field type that decodes its own raw TOML value and
// reports its own errors (e.g. one per bad element of a list).
type keyDecoder interface {
	decodeKey(key string, raw any, errs *Errors)
}

// decodeTable decodes the TOML table prim into the struct dst points to,
// key by key, so that one bad value hides no other error. A key without a
// field is an error, and so is a value that is not a table. Errors carry
// no line: Parse gives each the line of its key (keyLines).
func decodeTable(md toml.MetaData, prim toml.Primitive, table string, dst any, errs *Errors) {
	var raw any
	if err := md.PrimitiveDecode(prim, &raw); err != nil {
		errs.Add(table, "%s", decodeReason(err))
		return
	}
	if _, ok := raw.(map[string]any); !ok {
		errs.Add(table, "want a table, got %s", tomlType(raw))
		return
	}
	var keys map[string]toml.Primitive
	if err := md.PrimitiveDecode(prim, &keys); err != nil {
		errs.Add(table, "%s", decodeReason(err))
		return
	}
	fields := fieldsByKey(reflect.ValueOf(dst).Elem())
	for _, k := range sortedNames(keys) {
		key := table + "." + keyPart(k)
		f, ok := fields[k]
		if !ok {
			errs.Add(key, "unknown key%s", nearest.Hint(k, sortedNames(fields)))
			continue
		}
		decodeKey(md, keys[k], key, f, errs)
	}
}

// fieldsByKey maps the toml tags of a struct's fields to the fields.
func fieldsByKey(v reflect.Value) map[string]reflect.Value {
	out := map[string]reflect.Value{}
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		tag, _, _ := strings.Cut(t.Field(i).Tag.Get("toml"), ",")
		if tag != "" && tag != "-" && t.Field(i).IsExported() {
			out[tag] = v.Field(i)
		}
	}
	return out
}

var (
	fileModeType = reflect.TypeOf(fs.FileMode(0))
	levelType    = reflect.TypeOf(slog.Level(0))
	addrPortType = reflect.TypeOf(netip.AddrPort{})
	addrType     = reflect.TypeOf(netip.Addr{})
)

// decodeKey decodes one key's value into field f.
func decodeKey(md toml.MetaData, p toml.Primitive, key string, f reflect.Value, errs *Errors) {
	var raw any
	if err := md.PrimitiveDecode(p, &raw); err != nil {
		errs.Add(key, "%s", decodeReason(err))
		return
	}
	if kd, ok := f.Addr().Interface().(keyDecoder); ok {
		kd.decodeKey(key, raw, errs)
		return
	}
	switch f.Type() {
	case fileModeType:
		decodeFileMode(key, raw, f, errs)
		return
	case levelType:
		decodeLevel(key, raw, f, errs)
		return
	case addrPortType:
		decodeAddrPort(key, raw, f, errs)
		return
	case addrType:
		decodeAddr(key, raw, f, errs)
		return
	}
	switch {
	case f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.Struct:
		decodeTableArray(md, p, key, raw, f, errs)
		return
	case f.Kind() == reflect.Map && f.Type().Key().Kind() == reflect.String:
		decodeMap(md, p, key, raw, f, errs)
		return
	}
	tmp := reflect.New(f.Type())
	if err := md.PrimitiveDecode(p, tmp.Interface()); err != nil {
		errs.Add(key, "%s", decodeReason(err))
		return
	}
	f.Set(tmp.Elem())
}

// decodeMap decodes a table of free keys ([quake3.info]) entry by entry, so
// that every bad value is reported with its key: "quake3.info.k".
func decodeMap(md toml.MetaData, p toml.Primitive, key string, raw any, f reflect.Value, errs *Errors) {
	if _, ok := raw.(map[string]any); !ok { // the decoder would ignore it
		errs.Add(key, "want a table, got %s", tomlType(raw))
		return
	}
	var entries map[string]toml.Primitive
	if err := md.PrimitiveDecode(p, &entries); err != nil {
		errs.Add(key, "%s", decodeReason(err))
		return
	}
	out := reflect.MakeMapWithSize(f.Type(), len(entries))
	for _, k := range sortedNames(entries) {
		v := reflect.New(f.Type().Elem())
		if err := md.PrimitiveDecode(entries[k], v.Interface()); err != nil {
			errs.Add(key+"."+keyPart(k), "%s", decodeReason(err))
			continue
		}
		out.SetMapIndex(reflect.ValueOf(k).Convert(f.Type().Key()), v.Elem())
	}
	f.Set(out)
}

// decodeTableArray decodes an array of tables ([[quake3.masters]]) table
// by table, so that every bad element is reported with its index:
// "quake3.masters[1].heartbeat".
func decodeTableArray(md toml.MetaData, p toml.Primitive, key string, raw any, f reflect.Value, errs *Errors) {
	switch raw.(type) {
	case []map[string]any, []any:
	default:
		errs.Add(key, "want an array of tables, got %s", tomlType(raw))
		return
	}
	var elems []toml.Primitive
	if err := md.PrimitiveDecode(p, &elems); err != nil {
		errs.Add(key, "%s", decodeReason(err))
		return
	}
	out := reflect.MakeSlice(f.Type(), len(elems), len(elems))
	for i, e := range elems {
		decodeTable(md, e, fmt.Sprintf("%s[%d]", key, i), out.Index(i).Addr().Interface(), errs)
	}
	f.Set(out)
}

// decodeFileMode takes permissions written as an octal string ("0660").
func decodeFileMode(key string, raw any, f reflect.Value, errs *Errors) {
	s, _ := raw.(string)
	m, err := strconv.ParseUint(s, 8, 32)
	if err != nil || m > 0o777 {
		errs.Add(key, "want octal permissions as a string, such as \"0660\", got %s", quoted(raw))
		return
	}
	f.Set(reflect.ValueOf(fs.FileMode(m)))
}

// decodeLevel takes debug, info, warn or error.
func decodeLevel(key string, raw any, f reflect.Value, errs *Errors) {
	levels := map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError}
	s, _ := raw.(string)
	l, ok := levels[s]
	if !ok {
		errs.Add(key, "want debug, info, warn or error, got %s", quoted(raw))
		return
	}
	f.Set(reflect.ValueOf(l))
}

// decodeAddrPort takes "IP:PORT", or "" for none (the zero AddrPort). The
// error's example is the default, if the key has one.
func decodeAddrPort(key string, raw any, f reflect.Value, errs *Errors) {
	s, ok := raw.(string)
	ap, err := netip.ParseAddrPort(s)
	switch {
	case ok && s == "":
		f.Set(reflect.ValueOf(netip.AddrPort{}))
	case !ok || err != nil:
		example := "127.0.0.1:8080"
		if def := f.Interface().(netip.AddrPort); def.IsValid() {
			example = def.String()
		}
		errs.Add(key, "want IP:PORT such as %q, or \"\" to turn it off, got %s", example, quoted(raw))
	default:
		f.Set(reflect.ValueOf(ap))
	}
}

// decodeAddr takes an IP address, or "" for none (the zero Addr).
func decodeAddr(key string, raw any, f reflect.Value, errs *Errors) {
	s, ok := raw.(string)
	a, err := netip.ParseAddr(s)
	switch {
	case ok && s == "":
		f.Set(reflect.ValueOf(netip.Addr{}))
	case !ok || err != nil:
		errs.Add(key, "want an IP address such as \"203.0.113.7\" or \"2001:db8::7\", or \"\" for none, got %s", quoted(raw))
	default:
		f.Set(reflect.ValueOf(a))
	}
}

var (
	typeMismatch = regexp.MustCompile(`incompatible types: TOML value has type (.+); destination has type (.+)$`)
	tableWanted  = regexp.MustCompile(`type mismatch for .+: expected table but found (.+)$`)
	lineOf       = regexp.MustCompile(`^toml: (?:line (\d+) ?)?(?:\(last key "(?:[^"\\]|\\.)*"\))?: `)
)

// decodeReason turns the TOML decoder's error into what is wrong, without
// its line (the error's key gives it): "want an integer, got a string".
func decodeReason(err error) string {
	msg, _ := splitDecodeError(err)
	if m := typeMismatch.FindStringSubmatch(msg); m != nil {
		msg = fmt.Sprintf("want %s, got %s", typeName(m[2]), typeName(m[1]))
	} else if m := tableWanted.FindStringSubmatch(msg); m != nil {
		msg = "want a table, got " + typeName(m[1])
	}
	return msg
}

// splitDecodeError splits a decoder's error into its message and line.
func splitDecodeError(err error) (msg, line string) {
	var perr toml.ParseError
	if errors.As(err, &perr) {
		if perr.Position.Line > 0 {
			line = strconv.Itoa(perr.Position.Line)
		}
		return perr.Message, line
	}
	msg = err.Error()
	if m := lineOf.FindStringSubmatch(msg); m != nil {
		return msg[len(m[0]):], m[1]
	}
	return strings.TrimPrefix(msg, "toml: "), ""
}

// typeName names a type in the decoder's messages (a Go type, or the
// decoder's name of a destination) for people: "an integer", "a table".
func typeName(t string) string {
	switch t {
	case "int64", "integer":
		return "an integer"
	case "float64", "float":
		return "a float"
	case "bool", "boolean":
		return "a boolean"
	case "string", "primitive (string-like)":
		return "a string"
	case "[]any", "[]interface {}", "slice", "array":
		return "an array"
	case "[]map[string]any", "[]map[string]interface {}":
		return "an array of tables"
	case "map[string]any", "map[string]interface {}", "map", "struct":
		return "a table"
	case "time.Time":
		return "a date-time"
	}
	return "a value of type " + t
}

// tomlType names the TOML type of a decoded value.
func tomlType(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case []map[string]any:
		return "an array of tables"
	case map[string]any:
		return "a table"
	case time.Time:
		return "a date-time"
	}
	return typeName(strings.ReplaceAll(fmt.Sprintf("%T", v), "interface {}", "any"))
}

// quoted shows a raw value: a string quoted, anything else by its type.
func quoted(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return tomlType(v)
}

// sortedNames returns a map's keys in order.
func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// isReported reports whether errs already has an error for key.
func isReported(errs Errors, key string) bool {
	for _, e := range errs {
		if e.Key == key || strings.HasPrefix(e.Key, key+".") || strings.HasPrefix(e.Key, key+"[") {
			return true
		}
	}
	return false
}

// keyPart writes one part of a key as TOML would: bare when it can be,
// else quoted ("" for an empty name, "a.b" for a name with a dot).
func keyPart(s string) string {
	if s == "" || strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-')
	}) {
		return strconv.Quote(s)
	}
	return s
}
