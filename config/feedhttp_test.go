package config_test

import (
	"strings"
	"testing"
)

// [feed] http takes only loopback addresses, and needs an absolute
// http_token_file; every error names its key.
func TestFeedHTTP(t *testing.T) {
	for text, want := range map[string]string{
		"http = \"0.0.0.0:27017\"\nhttp_token_file = \"/t\"":        `feed.http: want a loopback address such as "127.0.0.1:27017" or "[::1]:27017" (the feed is the game server's, not the network's), got "0.0.0.0:27017"`,
		"http = \"192.0.2.7:27017\"\nhttp_token_file = \"/t\"":      `feed.http: want a loopback address`,
		"http = \"[::]:27017\"\nhttp_token_file = \"/t\"":           `feed.http: want a loopback address`,
		"http = \"[::ffff:127.0.0.1]:1\"\nhttp_token_file = \"/t\"": `feed.http: want a loopback address`,
		"http = \"localhost:27017\"\nhttp_token_file = \"/t\"":      `feed.http: `,
		"http = \"127.0.0.1:27017\"":                                `feed.http_token_file: required when feed.http is set`,
		"http = \"127.0.0.1:27017\"\nhttp_token_file = \"t\"":       `feed.http_token_file: want an absolute path, got "t"`,
		"http_max_conns = 0":                                        `feed.http_max_conns: want 1 to 4096 connections, got 0`,
	} {
		_, err := parse("[feed]\n" + text + "\n")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", text, err, want)
		}
	}
	for _, text := range []string{"", "http = \"\"", "http = \"127.0.0.1:27017\"\nhttp_token_file = \"/etc/queryd/feed.token\"",
		"http = \"127.9.9.9:0\"\nhttp_token_file = \"/t\"", "http = \"[::1]:27017\"\nhttp_token_file = \"/t\"\nhttp_max_conns = 4"} {
		c, err := parse("[feed]\n" + text + "\n")
		if err != nil {
			t.Errorf("%q: %v", text, err)
			continue
		}
		if text == "" && (c.Feed.HTTP.IsValid() || c.Feed.HTTPMaxConns != 16) {
			t.Errorf("defaults: %+v", c.Feed)
		}
	}
}
