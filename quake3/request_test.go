package quake3

import (
	"bytes"
	"strings"
	"testing"

	"github.com/queryd/queryd/dgram"
)

func TestParseRequest(t *testing.T) {
	cases := []struct {
		req       string
		typ       byte
		challenge string // "-" when none
	}{
		{q3 + "getinfo", TypeInfo, "-"},
		{q3 + "getinfo\n", TypeInfo, "-"},
		{q3 + "getinfo\x00", TypeInfo, "-"},
		{q3 + "getinfo\x00junk after the NUL", TypeInfo, "-"},
		{q3 + "GetInfo abc", TypeInfo, "abc"},
		{q3 + "getinfo abc\n", TypeInfo, "abc"},
		{q3 + "getinfo\tabc \r\n", TypeInfo, "abc"},
		{q3 + "getinfo   ", TypeInfo, "-"},
		{q3 + "getinfo " + strings.Repeat("z", 128), TypeInfo, strings.Repeat("z", 128)},
		{q3 + "getinfo !#$%&'()*+,-./:<=>?@[]^_`{|}~", TypeInfo, "!#$%&'()*+,-./:<=>?@[]^_`{|}~"},
		{q3 + "getstatus", TypeStatus, "-"},
		{q3 + "GETSTATUS\n", TypeStatus, "-"},
		{q3 + "getstatus\x00", TypeStatus, "-"},
		{q3 + "getstatus 12345", TypeStatus, "12345"},
		// ioquake3's parser (command): the second token is the challenge,
		// what follows it is ignored; any byte from 1 to 32 separates.
		{q3 + "getinfo a b", TypeInfo, "a"},
		{q3 + "getinfo a\"b", TypeInfo, "a"},
		{q3 + "getstatus \x01", TypeStatus, "-"},
		{q3 + "getinfo \"abc\"", TypeInfo, "abc"},
		{q3 + "getinfo \"\"", TypeInfo, "-"},
		{q3 + "getinfo//abc", TypeInfo, "-"},
		{q3 + "getinfo abc//def", TypeInfo, "abc"},
	}
	for _, c := range cases {
		if !Claims([]byte(c.req)) {
			t.Errorf("%q not claimed", c.req)
		}
		r, err := ParseRequest([]byte(c.req))
		if err != nil {
			t.Errorf("%q: %v", c.req, err)
			continue
		}
		ch := "-"
		if r.Challenge != nil {
			ch = string(r.Challenge)
		}
		if r.Type != c.typ || ch != c.challenge {
			t.Errorf("%q: type %c challenge %q, want %c %q", c.req, r.Type, ch, c.typ, c.challenge)
		}
	}
}

func TestParseRequestMalformed(t *testing.T) {
	cases := []struct {
		req    string
		claims bool
	}{
		{"", false},
		{q3, false},
		{q3 + "getinf", false},
		{"\xff\xff\xff\xfegetinfo", false},
		{q3 + "getchallenge", false},
		{q3 + "getservers 68", false},
		{q3 + "TSource Engine Query\x00", false},
		{"\xfe\xfd\x09\x01\x02\x03\x04", false},
		{q3 + "getinfox", false},
		{q3 + "getstatusx abc", false},
		{q3 + "getinfo " + strings.Repeat("z", 129), true},
		{q3 + "getinfo a\\b", true},
		{q3 + "getinfo a;b", true},
		{q3 + "getinfo a\x7fb", true},
		{q3 + "getinfo \xc3\xa9", true},
		{q3 + "getinfo \"a b\"", true},
		{q3 + "getinfo/x", false},
		{q3 + " getinfo " + strings.Repeat("z", 129), true},
		{q3 + " getinfox", false},
		{q3 + "\"get info\"", false},
		{q3 + "//getinfo", false},
		{q3 + "\ngetinfo", false},
		{q3 + strings.Repeat(" ", 1023) + "getinfo", false},
	}
	for _, c := range cases {
		if got := Claims([]byte(c.req)); got != c.claims {
			t.Errorf("Claims(%q) = %v, want %v", c.req, got, c.claims)
		}
		if r, err := ParseRequest([]byte(c.req)); err == nil {
			t.Errorf("%q parsed as %+v, want an error", c.req, r)
		}
	}
	h := handlerFor(t, Config{}, `{"name":"x"}`)
	if out, _ := serve(t, h, q3+"getinfo a\\b"); out != nil {
		t.Errorf("a malformed challenge was answered: %q", out)
	}
}

// A handler with no snapshot yet, or a scratch too small, answers nothing.
func TestAnswerWithoutRoom(t *testing.T) {
	h := NewHandler(Config{}, DefaultPacketRate, 0)
	if out, o := h.Answer([]byte(q3+"getinfo"), testSrc, make([]byte, MaxReply), nil); len(out) != 0 || o.String() != "ignored" {
		t.Errorf("no snapshot: %q %s", out, o)
	}
	h.Update(snapOf(t, `{"name":"x"}`))
	if out, o := h.Answer([]byte(q3+"getinfo abc"), testSrc, make([]byte, 10), nil); len(out) != 0 || o.String() != "ignored" {
		t.Errorf("small scratch: %q %s", out, o)
	}
	if r, b := h.PacketLimit(); r != DefaultPacketRate || b != DefaultPacketBurst {
		t.Errorf("packet limit %v %d", r, b)
	}
	if r, _ := NewHandler(Config{}, dgram.NoPacketLimit, 0).PacketLimit(); r != dgram.NoPacketLimit {
		t.Errorf("packet_rate = 0 gives %v, want 0 (off)", r)
	}
}

func FuzzParseRequest(f *testing.F) {
	for _, s := range []string{
		q3 + "getinfo", q3 + "getinfo xyz", q3 + "getstatus\x00", q3 + "getStatus abc\r\n",
		q3 + "getinfo a\\b", q3 + "getinfox", q3 + "getchallenge", "",
	} {
		f.Add([]byte(s))
	}
	h := NewHandler(Config{}, DefaultPacketRate, 0)
	h.Update(snapOf(f, `{"name":"fuzz","map":"m","players":{"1":{"name":"p"}}}`))
	scratch := make([]byte, MaxReply)
	f.Fuzz(func(t *testing.T, p []byte) {
		r, err := ParseRequest(p)
		if err != nil {
			return
		}
		if !Claims(p) {
			t.Fatalf("%q parses but is not claimed", p)
		}
		if len(r.Challenge) > MaxChallenge || bytes.ContainsAny(r.Challenge, "\\;\" \n\x00") {
			t.Fatalf("%q: bad challenge %q accepted", p, r.Challenge)
		}
		out, _ := h.Answer(p, testSrc, scratch, nil)
		if len(out) != 1 || len(out[0]) > MaxReply {
			t.Fatalf("%q: %d datagrams", p, len(out))
		}
		if r.Challenge != nil && !bytes.Contains(out[0], append([]byte(`\challenge\`), r.Challenge...)) {
			t.Fatalf("%q: challenge not echoed in %q", p, out[0])
		}
	})
}
