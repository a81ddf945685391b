package gamespy4

import (
	"errors"
	"strings"
	"testing"
)

func TestParseHandshakeWikiExample(t *testing.T) {
	tok, err := ParseHandshake(unhex(t, "09 00 00 00 01 39 35 31 33 33 30 37 00"), [4]byte{0, 0, 0, 1})
	if err != nil || tok != 9513307 {
		t.Fatalf("token %d, err %v; want 9513307", tok, err)
	}
}

func TestParseBasicWikiExample(t *testing.T) {
	b, err := ParseBasic(append(unhex(t, "00 00 00 00 01"), unhex(t, wikiBasic)...), [4]byte{0, 0, 0, 1})
	if err != nil {
		t.Fatal(err)
	}
	want := Basic{MOTD: "A Minecraft Server", GameType: "SMP", Map: "world", NumPlayers: "2", MaxPlayers: "20", HostPort: 25565, HostIP: "127.0.0.1"}
	if *b != want {
		t.Fatalf("got %+v\nwant %+v", *b, want)
	}
}

func TestParseRepliesRejectBroken(t *testing.T) {
	s := [4]byte{0, 0, 0, 1}
	full := append(unhex(t, "00 00 00 00 01"), unhex(t, wikiFull)...)
	basic := append(unhex(t, "00 00 00 00 01"), unhex(t, wikiBasic)...)
	cases := map[string]func() error{
		"handshake, no NUL":     func() error { _, err := ParseHandshake(unhex(t, "09 00 00 00 01 39 35"), s); return err },
		"handshake, not digits": func() error { _, err := ParseHandshake(unhex(t, "09 00 00 00 01 41 00"), s); return err },
		"handshake, over int32": func() error { _, err := ParseHandshake([]byte("\x09\x00\x00\x00\x012147483648\x00"), s); return err },
		"handshake, wrong type": func() error { _, err := ParseHandshake(unhex(t, "00 00 00 00 01 31 00"), s); return err },
		"basic, wrong session":  func() error { _, err := ParseBasic(basic, [4]byte{0, 0, 0, 2}); return err },
		"basic, no hostip":      func() error { _, err := ParseBasic(basic[:len(basic)-10], s); return err },
		"basic, trailing byte":  func() error { _, err := ParseBasic(append(basic[:len(basic):len(basic)], 0), s); return err },
		"full, cut short":       func() error { _, err := ParseFull(full[:len(full)-1], s); return err },
		"full, trailing byte":   func() error { _, err := ParseFull(append(full[:len(full):len(full)], 'x'), s); return err },
		"full, bad splitnum": func() error {
			_, err := ParseFull(append(unhex(t, "00 00 00 00 01 73 70 6C 69 74 6E 75 6D 00 00 00"), full[16:]...), s)
			return err
		},
		"full, no player header": func() error {
			_, err := ParseFull([]byte(strings.Replace(string(full), "player_", "players", 1)), s)
			return err
		},
		"too short": func() error { _, err := ParseFull([]byte{0, 0}, s); return err },
	}
	for name, f := range cases {
		var bad *BadAnswerError
		if err := f(); !errors.As(err, &bad) {
			t.Errorf("%s: err %v, want a BadAnswerError", name, err)
		}
	}
}
