package config

import (
	"fmt"
	"io/fs"
	"log/slog"
	"net/netip"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// keyDecoder is a field type that decodes its own raw TOML value and
// reports its own errors (e.g. one per bad element of a list).
type keyDecoder interface {
	decodeKey(key string, raw any, errs *Errors)
}

// decodeTable decodes the TOML table prim into the struct dst points to,
// key by key, so that one bad value hides no other error. A key without a
// field is an error.
func decodeTable(md toml.MetaData, prim toml.Primitive, table string, dst any, errs *Errors) {
	var keys map[string]toml.Primitive
	if err := md.PrimitiveDecode(prim, &keys); err != nil {
		errs.Add(table, "want a table ([%s] with keys under it)", table)
		return
	}
	fields := fieldsByKey(reflect.ValueOf(dst).Elem())
	for _, k := range sortedNames(keys) {
		key := table + "." + k
		f, ok := fields[k]
		if !ok {
			errs.Add(key, "unknown key")
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
	tmp := reflect.New(f.Type())
	if err := md.PrimitiveDecode(p, tmp.Interface()); err != nil {
		errs.Add(key, "%s", decodeReason(err))
		return
	}
	f.Set(tmp.Elem())
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

// decodeAddrPort takes "IP:PORT", or "" for none (the zero AddrPort).
func decodeAddrPort(key string, raw any, f reflect.Value, errs *Errors) {
	s, ok := raw.(string)
	ap, err := netip.ParseAddrPort(s)
	switch {
	case ok && s == "":
		f.Set(reflect.ValueOf(netip.AddrPort{}))
	case !ok || err != nil:
		errs.Add(key, "want IP:PORT such as \"127.0.0.1:9273\", or \"\" to turn it off, got %s", quoted(raw))
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

// DecodeAddrPort parses an optional "IP:PORT" key of a module's section
// ("" is the zero AddrPort), adding an error naming key when it is bad.
func DecodeAddrPort(key, s, example string, errs *Errors) netip.AddrPort {
	if s == "" {
		return netip.AddrPort{}
	}
	ap, err := netip.ParseAddrPort(s)
	if err != nil {
		errs.Add(key, "want IP:PORT such as %q, or \"\" to turn it off, got %q", example, s)
	}
	return ap
}

var typeMismatch = regexp.MustCompile(`incompatible types: TOML value has type ([\w.\[\]{}]+); destination has type ([\w.\[\]{}]+)`)
var lineOf = regexp.MustCompile(`^toml: line (\d+)(?: \(last key "[^"]*"\))?: `)

// decodeReason turns the TOML decoder's error into what is wrong, with the
// line: "want an integer, got a string (line 5)".
func decodeReason(err error) string {
	msg := err.Error()
	line := ""
	if m := lineOf.FindStringSubmatch(msg); m != nil {
		line = " (line " + m[1] + ")"
		msg = msg[len(m[0]):]
	}
	if m := typeMismatch.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("want %s, got %s%s", article(m[2]), article(m[1]), line)
	}
	return strings.TrimPrefix(msg, "toml: ") + line
}

// article names a TOML or Go type for people: "an integer", "a string".
func article(t string) string {
	switch t {
	case "integer", "array", "[]interface {}":
		if t == "[]interface {}" {
			t = "array"
		}
		return "an " + t
	case "map[string]interface {}", "struct":
		return "a table"
	}
	return "a " + t
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
	case []any, []map[string]any:
		return "an array"
	case map[string]any:
		return "a table"
	}
	return fmt.Sprintf("%T", v)
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
