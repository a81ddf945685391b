package gamespy4_test

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/gamespy4"
)

func parseGameSpy4(text string) (*gamespy4.Section, error) {
	c, err := config.Parse([]byte(text), gamespy4.Module{})
	if err != nil {
		return nil, err
	}
	return c.Section("gamespy4").(*gamespy4.Section), nil
}

func TestSectionDefaults(t *testing.T) {
	for _, text := range []string{"", "[gamespy4]\nenabled = true\n"} {
		g, err := parseGameSpy4(text)
		if err != nil {
			t.Fatal(err)
		}
		want := gamespy4.Section{Enabled: true, GameType: "SMP", GameID: "MINECRAFT", MaxPacket: 1024}
		if *g != want || !g.On() {
			t.Fatalf("%q: got %+v, want %+v", text, *g, want)
		}
	}
}

func TestSectionSet(t *testing.T) {
	g, err := parseGameSpy4(`[gamespy4]
gametype = "SMP"
game_id = "MYGAME"
plugins = "queryd 1.0: Foo 1.2"
hostport = 25565
hostip = "2001:db8::7"
max_packet = 1472
`)
	if err != nil {
		t.Fatal(err)
	}
	want := gamespy4.Section{Enabled: true, GameType: "SMP", GameID: "MYGAME", Plugins: "queryd 1.0: Foo 1.2",
		HostPort: 25565, HostIP: netip.MustParseAddr("2001:db8::7"), MaxPacket: 1472}
	if *g != want {
		t.Fatalf("got %+v, want %+v", *g, want)
	}
	for text, ip := range map[string]netip.Addr{
		`hostip = "203.0.113.7"`: netip.MustParseAddr("203.0.113.7"),
		`hostip = ""`:            {}, // the IP of the first [listen] udp address
	} {
		g, err := parseGameSpy4("[gamespy4]\n" + text + "\n")
		if err != nil || g.HostIP != ip {
			t.Errorf("%s: %v %+v", text, err, g)
		}
	}
	if g, err := parseGameSpy4("[gamespy4]\nenabled = false\n"); err != nil || g.On() {
		t.Errorf("enabled = false: %v %+v", err, g)
	}
}

func TestSectionErrors(t *testing.T) {
	_, err := parseGameSpy4(`[gamespy4]
gametype = "` + strings.Repeat("x", 33) + `"
game_id = "a\tb"
plugins = "` + strings.Repeat("p", 257) + `"
hostport = 70000
hostip = "example.org"
max_packet = 512
`)
	var errs config.Errors
	if !errors.As(err, &errs) {
		t.Fatalf("want config errors, got %v", err)
	}
	want := `gamespy4.game_id: contains a control character (line 3)
gamespy4.gametype: too long: 33 bytes, at most 32 (line 2)
gamespy4.hostip: want an IP address such as "203.0.113.7" or "2001:db8::7", or "" for none, got "example.org" (line 6)
gamespy4.hostport: want 0 to 65535, got 70000 (line 5)
gamespy4.max_packet: want 1024 to 8192 bytes, got 512 (line 7)
gamespy4.plugins: too long: 257 bytes, at most 256 (line 4)`
	if err.Error() != want {
		t.Fatalf("errors\n%v\nwant\n%s", err, want)
	}
	for bad, wantErr := range map[string]string{
		`hostip = "fe80::1%eth0"`:  `gamespy4.hostip: want an IP address without a zone, got "fe80::1%eth0" (line 2)`,
		`hostip = "1.2.3.4:25565"`: `gamespy4.hostip: want an IP address such as "203.0.113.7" or "2001:db8::7", or "" for none, got "1.2.3.4:25565" (line 2)`,
		`hostip = 7`:               `gamespy4.hostip: want an IP address such as "203.0.113.7" or "2001:db8::7", or "" for none, got an integer (line 2)`,
		`max_packet = 8193`:        "gamespy4.max_packet: want 1024 to 8192 bytes, got 8193 (line 2)",
		`hostport = -1`:            "gamespy4.hostport: want 0 to 65535, got -1 (line 2)",
		`plugins = "a\u007fb"`:     "gamespy4.plugins: contains a control character (line 2)",
		`gametype = 1`:             "gamespy4.gametype: want a string, got an integer (line 2)",
		`nope = 1`:                 "gamespy4.nope: unknown key (line 2)",
	} {
		if _, err := parseGameSpy4("[gamespy4]\n" + bad + "\n"); err == nil || err.Error() != wantErr {
			t.Errorf("%s: %v; want %s", bad, err, wantErr)
		}
	}
}
