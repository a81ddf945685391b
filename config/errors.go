package config

import (
	"fmt"
	"strings"
)

// Error is one config error: the key (dotted path), what is wrong, and
// the line of the file it is about (0 when none: the key is not in the
// file, nor any key above it).
type Error struct {
	Key    string
	Reason string
	Line   int
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s: %s (line %d)", e.Key, e.Reason, e.Line)
	}
	return e.Key + ": " + e.Reason
}

// Errors is every error found in one config, in key order.
type Errors []*Error

func (es Errors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "\n")
}

// Add records an error for key; a module's Check uses it for its section.
func (es *Errors) Add(key, format string, args ...any) {
	*es = append(*es, &Error{Key: key, Reason: fmt.Sprintf(format, args...)})
}

// Covers reports whether one of the errors is at key, under it or above it
// ("listen.udp[0]" covers "listen.udp" and "listen.udp[0].x"): a finding
// about that key would only repeat the error.
func (es Errors) Covers(key string) bool {
	under := func(k, t string) bool { return strings.HasPrefix(k, t+".") || strings.HasPrefix(k, t+"[") }
	for _, e := range es {
		if e.Key == key || under(e.Key, key) || under(key, e.Key) {
			return true
		}
	}
	return false
}
