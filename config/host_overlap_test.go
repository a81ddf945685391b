package config_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestHostOverlaps: a server listening on an address (wildcards included,
// IPv4 and IPv6) or feeding at a socket an earlier server holds is refused
// with the key and both files; the first keeps it.
func TestHostOverlaps(t *testing.T) {
	t.Setenv("XDG_RUNTIME_DIR", "/run/user/1")
	const feedHTTP = "[feed]\nhttp = \"127.0.0.1:8080\"\nhttp_token_file = \"/etc/queryd/token\"\n"
	for _, tc := range []struct {
		a, b string // the files a.toml and b.toml (b.toml comes second)
		key  string // b's error's key; "" for no overlap
	}{
		{udpServer("127.0.0.1:27115", ""), udpServer("127.0.0.1:27115", ""), "listen.udp[0]"},
		{udpServer("0.0.0.0:27115", ""), udpServer("198.18.0.1:27115", ""), "listen.udp[0]"},
		{udpServer("198.18.0.1:27115", ""), udpServer("0.0.0.0:27115", ""), "listen.udp[0]"},
		{udpServer("[::]:27115", ""), udpServer("127.0.0.1:27115", ""), "listen.udp[0]"},
		{udpServer("127.0.0.1:27115", ""), udpServer("[::]:27115", ""), "listen.udp[0]"},
		{udpServer("[::]:27115", ""), udpServer("[2001:db8::2]:27115", ""), "listen.udp[0]"},
		{udpServer("[::1]:27115", ""), udpServer("[::1]:27115", ""), "listen.udp[0]"},
		{udpServer("[::ffff:127.0.0.1]:27115", ""), udpServer("127.0.0.1:27115", ""), "listen.udp[0]"},
		{udpServer("0.0.0.0:27115", ""), udpServer("[::ffff:10.0.0.1]:27115", ""), "listen.udp[0]"},
		{udpServer("127.0.0.1:27115", ""), "[listen]\nudp = [\"127.0.0.1:27116\", \"127.0.0.1:27115\"]\n", "listen.udp[1]"},
		{udpServer("[::1]:27115", ""), udpServer("127.0.0.1:27115", ""), ""},
		{udpServer("0.0.0.0:27115", ""), udpServer("[::1]:27115", ""), ""},
		{udpServer("[2001:db8::1]:27115", ""), udpServer("[2001:db8::2]:27115", ""), ""},
		{udpServer("127.0.0.1:27115", ""), udpServer("127.0.0.2:27115", ""), ""},
		{udpServer("127.0.0.1:27115", ""), udpServer("127.0.0.1:27116", ""), ""},
		{udpServer("127.0.0.1:0", ""), udpServer("127.0.0.1:0", ""), ""},
		{udpServer("0.0.0.0:0", ""), udpServer("127.0.0.1:0", ""), ""},
		{udpServer("127.0.0.1:1", "/run/q/x.sock"), udpServer("127.0.0.1:2", "/run/q/x.sock"), "feed.socket"},
		{udpServer("127.0.0.1:1", "/run/q//x.sock"), udpServer("127.0.0.1:2", "/run/q/x.sock"), "feed.socket"},
		{udpServer("127.0.0.1:1", "/run/user/1/queryd/b.sock"), udpServer("127.0.0.1:2", ""), "feed.socket"},
		{udpServer("127.0.0.1:1", "/run/q/a.sock"), udpServer("127.0.0.1:2", "/run/q/b.sock"), ""},
		{udpServer("127.0.0.1:1", "") + feedHTTP, udpServer("127.0.0.1:2", "") + feedHTTP, "feed.http"},
		{udpServer("127.0.0.1:1", "") + "[sagl]\nhttp = \"127.0.0.1:8080\"\n", udpServer("127.0.0.1:2", "") + "[sagl]\nhttp = \"0.0.0.0:8080\"\n", "sagl.http"},
		{udpServer("127.0.0.1:1", "") + feedHTTP, udpServer("127.0.0.1:2", "") + "[sagl]\nhttp = \"127.0.0.1:8080\"\n", "sagl.http"},
		{udpServer("127.0.0.1:1", "") + "[sagl]\nhttp = \"127.0.0.1:8080\"\n", udpServer("127.0.0.1:2", "") + "[sagl]\nenabled = false\nhttp = \"127.0.0.1:8080\"\n", ""},
		{udpServer("127.0.0.1:8080", ""), udpServer("127.0.0.1:2", "") + feedHTTP, ""},
	} {
		h := loadHost(t, map[string]string{"queryd.toml": hostMain, "s/a.toml": tc.a, "s/b.toml": tc.b})
		msg := failed(h)["b.toml"]
		a := filepath.Join(filepath.Dir(h.Path), "s", "a.toml")
		switch {
		case tc.key == "" && (msg != "" || !slices.Equal(names(h), []string{"a", "b"})):
			t.Errorf("%q then %q: %v %q, want no overlap", tc.a, tc.b, names(h), msg)
		case tc.key != "" && (!strings.Contains(msg, "b.toml: "+tc.key+": ") || !strings.Contains(msg, a) || !slices.Equal(names(h), []string{"a"})):
			t.Errorf("%q then %q: %v %q, want %s naming %s", tc.a, tc.b, names(h), msg, tc.key, a)
		}
	}
}

// TestHostOverlapsMain: the main file's server and [admin] listen are
// claimed first: a server file on them is refused, naming the main file;
// the included server "feed" (whose default socket would be the main
// server's) is refused by name.
func TestHostOverlapsMain(t *testing.T) {
	main := hostMain + "[listen]\nudp = [\"0.0.0.0:27115\"]\n"
	h := loadHost(t, map[string]string{
		"queryd.toml": main,
		"s/a.toml":    udpServer("127.0.0.1:27115", ""),
		"s/b.toml":    udpServer("127.0.0.1:27116", "") + "[sagl]\nhttp = \"127.0.0.1:9273\"\n",
		"s/c.toml":    udpServer("127.0.0.1:27117", ""),
		"s/feed.toml": udpServer("127.0.0.1:27118", ""),
	})
	f := failed(h)
	if !slices.Equal(names(h), []string{"main", "c"}) || len(f) != 3 {
		t.Fatalf("servers %v, failed %v", names(h), f)
	}
	for file, want := range map[string]string{
		"a.toml":    fmt.Sprintf("listen.udp[0]: udp 127.0.0.1:27115 overlaps udp 0.0.0.0:27115 of listen.udp[0] in %s (server \"main\"): two servers cannot listen on one address", h.Path),
		"b.toml":    fmt.Sprintf("sagl.http: tcp 127.0.0.1:9273 overlaps tcp 127.0.0.1:9273 of admin.listen in %s", h.Path),
		"feed.toml": `the server name "feed" would take the main server's default socket`,
	} {
		if !strings.Contains(f[file], want) {
			t.Errorf("%s: %q, want %q", file, f[file], want)
		}
	}
}
