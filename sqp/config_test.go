package sqp_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/sqp"
)

func parseSQP(text string) (*config.Config, *sqp.Section, error) {
	c, err := config.Parse([]byte(text), sqp.Module{})
	if err != nil {
		return nil, nil, err
	}
	return c, c.Section("sqp").(*sqp.Section), nil
}

// SQP is off unless the config turns it on: its first bytes are weak.
func TestSectionDefaults(t *testing.T) {
	_, s, err := parseSQP("")
	if err != nil {
		t.Fatal(err)
	}
	if *s != (sqp.Section{}) || s.On() {
		t.Fatalf("defaults %+v, on %v", *s, s.On())
	}
	_, s, err = parseSQP("[sqp]\nenabled = true\ngame_type = \"Battle Royale\"\ngame_port = 7777\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := (sqp.Section{Enabled: true, GameType: "Battle Royale", GamePort: 7777}); *s != want || !s.On() {
		t.Fatalf("got %+v, want %+v", *s, want)
	}
}

func TestSectionErrors(t *testing.T) {
	_, _, err := parseSQP("[sqp]\ngame_type = \"" + strings.Repeat("x", 256) + "\"\ngame_port = 65536\n")
	var errs config.Errors
	if !errors.As(err, &errs) {
		t.Fatalf("want config errors, got %v", err)
	}
	want := "sqp.game_port: want 0 to 65535, got 65536 (line 3)\nsqp.game_type: too long: 256 bytes, at most 255 (line 2)"
	if err.Error() != want {
		t.Fatalf("errors\n%v\nwant\n%s", err, want)
	}
	for bad, wantErr := range map[string]string{
		`game_port = -1`:  "sqp.game_port: want 0 to 65535, got -1 (line 2)",
		`enabled = "yes"`: "sqp.enabled: want a boolean, got a string (line 2)",
		`nope = 1`:        "sqp.nope: unknown key (line 2)",
	} {
		if _, _, err := parseSQP("[sqp]\n" + bad + "\n"); err == nil || err.Error() != wantErr {
			t.Errorf("%s: %v; want %s", bad, err, wantErr)
		}
	}
}

// In relay mode, SQP's claim on 5- and 8-byte datagrams is worth a warning.
func TestSectionRelayWarning(t *testing.T) {
	relay := "[relay]\nupstream = \"127.0.0.1:27961\"\n"
	for text, want := range map[string]bool{
		"[sqp]\nenabled = true\n" + relay:  true,
		"[sqp]\nenabled = false\n" + relay: false,
		"[sqp]\nenabled = true\n":          false,
	} {
		c, _, err := parseSQP(text)
		if err != nil {
			t.Fatal(err)
		}
		w := strings.Join(c.Warnings(), "\n")
		if strings.Contains(w, "sqp.enabled: in relay mode") != want {
			t.Errorf("%q: warnings %q", text, w)
		}
	}
}
