package config

import (
	"fmt"
	"strings"
)

// Error is one config error: the key (dotted path) and what is wrong.
type Error struct {
	Key    string
	Reason string
}

func (e *Error) Error() string { return e.Key + ": " + e.Reason }

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
