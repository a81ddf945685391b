package quake3

// Characters the Quake 3 info string and status lines cannot carry are
// replaced, byte for byte, so UTF-8 stays valid:
//
//	\  -> /   (separates keys and values)
//	;  -> :   (separates console commands)
//	"  -> '   (quotes player names)
//	newline, carriage return and other control characters -> space
//
// The same rule applies to keys, values and player names.

// appendClean appends s to b with the forbidden characters replaced.
func appendClean(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		b = append(b, cleanByte(s[i]))
	}
	return b
}

// cleanByte is the replacement for one byte.
func cleanByte(c byte) byte {
	switch {
	case c == '\\':
		return '/'
	case c == ';':
		return ':'
	case c == '"':
		return '\''
	case c < 0x20 || c == 0x7F:
		return ' '
	}
	return c
}

// Clean returns s with the characters a Quake 3 info string cannot carry
// replaced (see the package's replacement rule).
func Clean(s string) string {
	return string(appendClean(nil, s))
}

// cleanName is a gamename: cleaned, with spaces (which dpmaster refuses in
// gamename) turned into underscores.
func cleanName(s string) string {
	b := appendClean(nil, s)
	for i, c := range b {
		if c == ' ' {
			b[i] = '_'
		}
	}
	return string(b)
}
