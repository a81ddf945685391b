package quake3

import (
	"bytes"
	"strings"
	"testing"
)

// ioq3Argv is a literal port of how ioquake3 1.36 (Debian's
// openarena-server) reads a connectionless datagram's command in
// SV_ConnectionlessPacket: MSG_ReadStringLine (qcommon/msg.c) then
// Cmd_TokenizeString (qcommon/cmd.c), on a NUL-terminated copy as in C.
// It is the reference command is checked against; it returns Cmd_Argv(0)
// and Cmd_Argv(1) ("" when absent) and false when p is not connectionless.
func ioq3Argv(p []byte) (string, string, bool) {
	if len(p) < 4 || !bytes.Equal(p[:4], header) {
		return "", "", false
	}
	// MSG_ReadStringLine
	var str []byte
	for i := 4; ; i++ {
		if i >= len(p) {
			break // MSG_ReadByte returns -1
		}
		c := p[i]
		if c == 0 || c == '\n' {
			break
		}
		if c == '%' || c > 127 {
			c = '.'
		}
		if len(str) >= 1023 {
			break
		}
		str = append(str, c)
	}
	text := append(str, 0, 0) // NUL-terminated (and text[1] readable at the end)
	// Cmd_TokenizeString2(text, qfalse)
	var argv []string
	t := 0
	for len(argv) < 2 {
		for {
			for text[t] != 0 && text[t] <= ' ' {
				t++
			}
			if text[t] == 0 {
				goto done
			}
			if text[t] == '/' && text[t+1] == '/' {
				goto done
			}
			if text[t] == '/' && text[t+1] == '*' {
				for text[t] != 0 && (text[t] != '*' || text[t+1] != '/') {
					t++
				}
				if text[t] == 0 {
					goto done
				}
				t += 2
			} else {
				break
			}
		}
		if text[t] == '"' {
			t++
			var tok []byte
			for text[t] != 0 && text[t] != '"' {
				tok = append(tok, text[t])
				t++
			}
			argv = append(argv, string(tok))
			if text[t] == 0 {
				goto done
			}
			t++
			continue
		}
		var tok []byte
		for text[t] > ' ' {
			if text[t] == '"' || text[t] == '/' && (text[t+1] == '/' || text[t+1] == '*') {
				break
			}
			tok = append(tok, text[t])
			t++
		}
		argv = append(argv, string(tok))
		if text[t] == 0 {
			goto done
		}
	}
done:
	argv = append(argv, "", "")
	return argv[0], argv[1], true
}

// qStricmp is ioquake3's Q_stricmp: equal but for the case of A-Z.
func qStricmp(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range len(a) {
		x, y := a[i], b[i]
		if 'a' <= x && x <= 'z' {
			x -= 'a' - 'A'
		}
		if 'a' <= y && y <= 'z' {
			y -= 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// dotted is b as MSG_ReadStringLine stores it: '%' and bytes above 127
// become '.'.
func dotted(b []byte) string {
	out := []byte(string(b))
	for i, c := range out {
		if c == '%' || c > 127 {
			out[i] = '.'
		}
	}
	return string(out)
}

// The spellings of the issue (39, item 6) and their kin: what ioquake3's
// parser reads as getinfo / getstatus is claimed and answered; what it
// reads as something else is not claimed ("getinfox" included).
func TestClaimsSpellings(t *testing.T) {
	cases := []struct {
		req       string
		typ       byte // 0: not claimed
		challenge string
	}{
		{" getstatus", TypeStatus, ""},
		{"\tgetinfo", TypeInfo, ""},
		{"\"getstatus\"", TypeStatus, ""},
		{"\"getstatus", TypeStatus, ""},
		{"\"GetInfo\" abc", TypeInfo, "abc"},
		{"\r\n", 0, ""},
		{"\x01\x02\x1f getstatus xyz", TypeStatus, "xyz"},
		{"/**/getinfo", TypeInfo, ""},
		{"/*/getinfo", TypeInfo, ""}, // ioquake3 looks for "*/" from the '*'
		{"/* a */ getstatus /* b */ c", TypeStatus, "c"},
		{"getstatus\"abc\"", TypeStatus, "abc"},
		{"getinfo/*x*/abc", TypeInfo, "abc"},
		{strings.Repeat(" ", 1000) + "getinfo", TypeInfo, ""},
		{strings.Repeat(" ", 1016) + "getinfo", TypeInfo, ""}, // ends at byte 1023 of the line
		{strings.Repeat(" ", 1017) + "getinfo", 0, ""},        // cut: "getinf"
		{" getinfo\n garbage", TypeInfo, ""},
		{" getinfo\x00 abc", TypeInfo, ""},
		{"\"get status\"", 0, ""},
		{"/* getinfo", 0, ""},
		{"// getinfo", 0, ""},
		{" getchallenge", 0, ""},
		{" getinfo2", 0, ""},
		{"\xe7etinfo", 0, ""},
		{"\n getinfo", 0, ""},
	}
	for _, c := range cases {
		p := []byte(q3 + c.req)
		a0, _, _ := ioq3Argv(p)
		want := c.typ != 0
		if ioq := qStricmp(a0, "getinfo") || qStricmp(a0, "getstatus"); ioq != want {
			t.Errorf("%q: the reference reads %q: the table is wrong", c.req, a0)
		}
		if Claims(p) != want {
			t.Errorf("Claims(%q) = %v, want %v", c.req, !want, want)
		}
		r, err := ParseRequest(p)
		if !want {
			continue
		}
		if err != nil || r.Type != c.typ || string(r.Challenge) != c.challenge {
			t.Errorf("ParseRequest(%q) = %c %q %v, want %c %q", c.req, r.Type, r.Challenge, err, c.typ, c.challenge)
		}
	}
}

func TestGloballyLimited(t *testing.T) {
	for _, c := range []struct {
		req  string
		want bool
	}{
		{q3 + "getchallenge", true},
		{q3 + "getchallenge 123 Quake3Arena", true},
		{q3 + " GETCHALLENGE", true},
		{q3 + "\"getchallenge\"", true},
		{q3 + "getinfo xyz", true},
		{q3 + "\tgetstatus", true},
		{q3 + "getchallengesteam", false},
		{q3 + "connect \"\\\\challenge\\\\1\"", false},
		{q3 + "rcon pass status", false},
		{q3 + "getinfox", false},
		{q3 + "TSource Engine Query\x00", false},
		{"getchallenge", false},
		{"\xff\xff\xff", false},
		{"", false},
	} {
		if got := GloballyLimited([]byte(c.req)); got != c.want {
			t.Errorf("GloballyLimited(%q) = %v, want %v", c.req, got, c.want)
		}
	}
}

// FuzzCommand checks command against the literal port of ioquake3's
// reader: the same first two tokens (with ioquake3's '.' for '%' and high
// bytes), so Claims takes exactly what the stock server answers as
// getinfo or getstatus, GloballyLimited exactly its
// globally limited commands, and ParseRequest agrees with Claims.
func FuzzCommand(f *testing.F) {
	for _, s := range []string{
		q3 + " getstatus", q3 + "\tgetinfo", q3 + "\"getstatus\"", q3 + "/*/getinfo x", q3 + "getinfo//x",
		q3 + "\"getinfo", q3 + "getinfo \"a b\" c", q3 + "getchallenge 1 Quake3Arena", q3 + "/* getinfo",
		q3 + strings.Repeat(" ", 1017) + "getinfo", q3 + "get%info", q3 + "\x80getinfo", "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		a0, a1, ok := command(p)
		r0, r1, rok := ioq3Argv(p)
		if ok != rok || dotted(a0) != r0 || dotted(a1) != r1 {
			t.Fatalf("%q: command %q %q %v, ioquake3 %q %q %v", p, a0, a1, ok, r0, r1, rok)
		}
		query := qStricmp(r0, "getinfo") || qStricmp(r0, "getstatus")
		if query && !Claims(p) {
			t.Fatalf("%q: ioquake3 reads %q, not claimed", p, r0)
		}
		if Claims(p) && !query {
			t.Fatalf("%q: claimed, but ioquake3 reads %q", p, r0)
		}
		if got, want := GloballyLimited(p), query || qStricmp(r0, "getchallenge"); got != want {
			t.Fatalf("%q: GloballyLimited %v, ioquake3 reads %q", p, got, r0)
		}
		if _, err := ParseRequest(p); err == nil && !Claims(p) {
			t.Fatalf("%q parses but is not claimed", p)
		}
	})
}

// The claim runs for every datagram in the hot path: it allocates nothing.
func TestClaimsAllocs(t *testing.T) {
	for _, s := range []string{q3 + "/* x */ \"getstatus\" abc", q3 + " getchallenge 1 Quake3Arena", q3 + "getinfo"} {
		p := []byte(s)
		if n := testing.AllocsPerRun(100, func() { Claims(p); GloballyLimited(p); ParseRequest(p) }); n != 0 {
			t.Errorf("%q: %v allocations", s, n)
		}
	}
}
