package config

import (
	"errors"
	"strings"
	"testing"
)

func TestGameSpy4Defaults(t *testing.T) {
	c, err := Parse([]byte("[gamespy4]\nenabled = true\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := GameSpy4{Enabled: true, GameType: "SMP", GameID: "MINECRAFT", MaxPacket: 1024}
	if c.GameSpy4 != want {
		t.Fatalf("got %+v, want %+v", c.GameSpy4, want)
	}
}

func TestGameSpy4Set(t *testing.T) {
	c, err := Parse([]byte(`[gamespy4]
gametype = "SMP"
game_id = "MYGAME"
plugins = "queryd 1.0: Foo 1.2"
hostport = 25565
hostip = "2001:db8::7"
max_packet = 1472
`))
	if err != nil {
		t.Fatal(err)
	}
	g := c.GameSpy4
	if g.GameID != "MYGAME" || g.Plugins != "queryd 1.0: Foo 1.2" || g.HostPort != 25565 || g.HostIP != "2001:db8::7" || g.MaxPacket != 1472 {
		t.Fatalf("got %+v", g)
	}
}

func TestGameSpy4Errors(t *testing.T) {
	_, err := Parse([]byte(`[gamespy4]
gametype = "` + strings.Repeat("x", 33) + `"
game_id = "a\tb"
plugins = "` + strings.Repeat("p", 257) + `"
hostport = 70000
hostip = "example.org"
max_packet = 512
`))
	var errs Errors
	if !errors.As(err, &errs) {
		t.Fatalf("want config errors, got %v", err)
	}
	var keys []string
	for _, e := range errs {
		keys = append(keys, e.Key)
	}
	want := "gamespy4.game_id gamespy4.gametype gamespy4.hostip gamespy4.hostport gamespy4.max_packet gamespy4.plugins"
	if strings.Join(keys, " ") != want {
		t.Fatalf("error keys %q\nwant %q\n%v", keys, want, err)
	}
	for _, bad := range []string{`hostip = "fe80::1%eth0"`, `max_packet = 8193`, `hostport = -1`} {
		if _, err := Parse([]byte("[gamespy4]\n" + bad + "\n")); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}
