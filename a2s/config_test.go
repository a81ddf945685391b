package a2s_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/queryd/queryd/a2s"
	"github.com/queryd/queryd/config"
)

func parseA2S(t *testing.T, text string) (*a2s.Section, error) {
	t.Helper()
	c, err := config.Parse([]byte(text), a2s.Module{})
	if err != nil {
		return nil, err
	}
	return c.Section("a2s").(*a2s.Section), nil
}

func TestSectionDefaults(t *testing.T) {
	for _, text := range []string{"", "[a2s]\n"} {
		s, err := parseA2S(t, text)
		if err != nil {
			t.Fatal(err)
		}
		want := a2s.Section{Enabled: true, AppID: a2s.DefaultAppID, Protocol: a2s.DefaultProtocol, InfoChallenge: true, Compat: true}
		if *s != want || s.AppID != 480 || s.Protocol != 17 {
			t.Fatalf("%q: got %+v, want %+v", text, *s, want)
		}
		if !s.On() {
			t.Fatal("[a2s] off by default")
		}
	}
}

func TestSectionValid(t *testing.T) {
	s, err := parseA2S(t, `[a2s]
enabled = false
app_id = 65535
game_id = 1234567890123
protocol = 255
info_challenge = false
compat = false
legacy_requests = true
game_port = 27016
`)
	if err != nil {
		t.Fatal(err)
	}
	want := a2s.Section{AppID: 65535, GameID: 1234567890123, Protocol: 255, LegacyRequests: true, GamePort: 27016}
	if *s != want || s.On() {
		t.Fatalf("got %+v, want %+v", *s, want)
	}
}

func TestSectionErrors(t *testing.T) {
	cases := []struct{ text, want string }{
		// A real Steam app id (most since ~2015 pass 65535): the error says
		// why it does not fit and where the full id goes.
		{"app_id = 1172470", "a2s.app_id: want 0 to 65535, got 1172470: A2S_INFO's app id field holds 16 bits; " +
			"set game_id = 1172470 instead (the 64-bit game id, whose low 24 bits clients read as the full app id) and leave app_id at a value that fits (line 2)"},
		{"app_id = -1", "a2s.app_id: want 0 to 65535, got -1 (line 2)"},
		{"protocol = 256", "a2s.protocol: want 0 to 255, got 256 (line 2)"},
		{"game_port = 65536", "a2s.game_port: want 0 to 65535, got 65536 (line 2)"},
		{"game_port = -1", "a2s.game_port: want 0 to 65535, got -1 (line 2)"},
		{`enabled = "yes"`, "a2s.enabled: want a boolean, got a string (line 2)"},
		{`app_id = "480"`, "a2s.app_id: want an integer, got a string (line 2)"},
		{"bogus = 1", "a2s.bogus: unknown key (line 2)"},
	}
	for _, c := range cases {
		_, err := parseA2S(t, "[a2s]\n"+c.text+"\n")
		var errs config.Errors
		if !errors.As(err, &errs) || err.Error() != c.want {
			t.Errorf("%s: %v; want %s", c.text, err, c.want)
		}
	}
	// Every bad key at once.
	_, err := parseA2S(t, "[a2s]\napp_id = 70000\nprotocol = 300\ngame_port = -1\nenabled = 1\n")
	if got := keysOf(err); got != "a2s.app_id a2s.enabled a2s.game_port a2s.protocol" {
		t.Errorf("keys %q of %v", got, err)
	}
}

func TestSectionWarnings(t *testing.T) {
	for text, warn := range map[string]bool{
		"app_id = 0":                  true,
		"app_id = 256":                true, // low byte 0
		"app_id = 480":                false,
		"app_id = 199":                true,
		"app_id = 200":                false,
		"app_id = 0\nenabled = false": false,
	} {
		c, err := config.Parse([]byte("[a2s]\n"+text+"\n"), a2s.Module{})
		if err != nil {
			t.Fatal(err)
		}
		w := strings.Join(c.Warnings(), "\n")
		if got := strings.HasPrefix(w, "a2s.app_id: ") && strings.Contains(w, "qstat"); got != warn {
			t.Errorf("%q: warnings %q, want an a2s.app_id warning: %v", text, w, warn)
		}
	}
}

// keysOf returns the keys of err's Errors, space-separated.
func keysOf(err error) string {
	var errs config.Errors
	if !errors.As(err, &errs) {
		return "not Errors: " + errString(err)
	}
	keys := make([]string, len(errs))
	for i, e := range errs {
		keys[i] = e.Key
	}
	return strings.Join(keys, " ")
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}
