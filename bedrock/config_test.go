package bedrock_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/queryd/queryd/bedrock"
	"github.com/queryd/queryd/config"
)

func parseBedrock(text string) (*bedrock.Section, error) {
	c, err := config.Parse([]byte(text), bedrock.Module{})
	if err != nil {
		return nil, err
	}
	return c.Section("bedrock").(*bedrock.Section), nil
}

func TestSectionDefaults(t *testing.T) {
	b, err := parseBedrock("")
	if err != nil {
		t.Fatal(err)
	}
	want := bedrock.Section{Edition: "MCPE", Protocol: 766, GameMode: "Survival", GameModeNumber: 1, PacketRate: 2, PacketBurst: 10}
	if *b != want || b.On() {
		t.Fatalf("got %+v (on %v), want %+v, off", *b, b.On(), want)
	}
	if b, err = parseBedrock("[bedrock]\nenabled = true\n"); err != nil || !b.On() {
		t.Fatalf("enabled = true: %v %+v", err, b)
	}
}

func TestSectionSet(t *testing.T) {
	b, err := parseBedrock(`[bedrock]
enabled = true
edition = "MCEE"
protocol = 800
game_mode = "Creative"
game_mode_number = 2
ipv4_port = 19132
ipv6_port = 19133
packet_rate = 0
packet_burst = 1
`)
	if err != nil {
		t.Fatal(err)
	}
	want := bedrock.Section{Enabled: true, Edition: "MCEE", Protocol: 800, GameMode: "Creative", GameModeNumber: 2,
		IPv4Port: 19132, IPv6Port: 19133, PacketRate: 0, PacketBurst: 1}
	if *b != want {
		t.Fatalf("got %+v, want %+v", *b, want)
	}
}

func TestSectionErrors(t *testing.T) {
	_, err := parseBedrock(`[bedrock]
edition = "MC;PE"
protocol = 0
game_mode = "a;b"
game_mode_number = 256
ipv4_port = 65536
ipv6_port = -1
packet_rate = -1
packet_burst = 0
`)
	var errs config.Errors
	if !errors.As(err, &errs) {
		t.Fatalf("want config errors, got %v", err)
	}
	want := `bedrock.edition: want 1 to 16 printable ASCII characters without ';' ("MCPE", or "MCEE" for Education Edition), got "MC;PE" (line 2)
bedrock.game_mode: want at most 64 bytes without ';' or control characters, got "a;b" (line 4)
bedrock.game_mode_number: want 0 to 255, got 256 (line 5)
bedrock.ipv4_port: want 0 to 65535, got 65536 (line 6)
bedrock.ipv6_port: want 0 to 65535, got -1 (line 7)
bedrock.packet_burst: want 1 to 1000000, got 0 (line 9)
bedrock.packet_rate: want 0 (off) to 1000000 pings per second, got -1 (line 8)
bedrock.protocol: want 1 to 1048576, got 0 (line 3)`
	if err.Error() != want {
		t.Fatalf("errors\n%v\nwant\n%s", err, want)
	}
	for bad, wantErr := range map[string]string{
		`edition = ""`: `bedrock.edition: want 1 to 16 printable ASCII characters without ';' ("MCPE", or "MCEE" for Education Edition), got "" (line 2)`,
		`edition = "` + strings.Repeat("E", 17) + `"`: `bedrock.edition: want 1 to 16 printable ASCII characters without ';' ("MCPE", or "MCEE" for Education Edition), got "EEEEEEEEEEEEEEEEE" (line 2)`,
		`edition = "MCPÉ"`:                            `bedrock.edition: want 1 to 16 printable ASCII characters without ';' ("MCPE", or "MCEE" for Education Edition), got "MCPÉ" (line 2)`,
		`game_mode = "a\tb"`:                          `bedrock.game_mode: want at most 64 bytes without ';' or control characters, got "a\tb" (line 2)`,
		`protocol = 1048577`:                          "bedrock.protocol: want 1 to 1048576, got 1048577 (line 2)",
		`protocol = "766"`:                            "bedrock.protocol: want an integer, got a string (line 2)",
		`nope = 1`:                                    "bedrock.nope: unknown key (line 2)",
	} {
		if _, err := parseBedrock("[bedrock]\n" + bad + "\n"); err == nil || err.Error() != wantErr {
			t.Errorf("%s: %v; want %s", bad, err, wantErr)
		}
	}
}
