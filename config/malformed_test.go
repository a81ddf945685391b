package config_test

import (
	"regexp"
	"strings"
	"testing"
)

// noLines drops the " (line N)" of errors: these tests are about what
// each error says; TestErrorLines is about its line.
func noLines(s string) string { return lineSuffix.ReplaceAllString(s, "") }

var lineSuffix = regexp.MustCompile(` \(line [0-9]+\)$|(?m) \(line [0-9]+\)$`)

// queryd check reports every error in one run, even when a table also has
// a value of the wrong type: the old loader stopped at the first such
// value (`[server]` with nmae and max_players = "lots" named only
// max_players; a type error in [a2s] hid the rest of the file).
func TestEveryErrorInOneRun(t *testing.T) {
	cases := []struct{ name, text, want string }{
		{"a type error and an unknown field in [server]",
			"[server]\nnmae = \"x\"\nmax_players = \"lots\"\n",
			"server.max_players: want an integer, got a string\n" +
				"server.nmae: unknown field (did you mean name?)"},
		{"type errors in several tables",
			"[a2s]\napp_id = \"x\"\nfoo = 1\n[listen]\nworkers = \"two\"\n[server]\nnmae = \"x\"\nmax_players = \"lots\"\n",
			"a2s.app_id: want an integer, got a string (line 2)\n" +
				"a2s.foo: unknown key\n" +
				"listen.workers: want an integer, got a string (line 5)\n" +
				"server.max_players: want an integer, got a string\n" +
				"server.nmae: unknown field (did you mean name?)"},
		{"a type error beside bad values in one table",
			"[gamespy4]\nhostport = \"x\"\nmax_packet = 1\ngame_id = 7\nplugins = \"a\\u0000b\"\n",
			"gamespy4.game_id: want a string, got an integer (line 4)\n" +
				"gamespy4.hostport: want an integer, got a string (line 2)\n" +
				"gamespy4.max_packet: want 1024 to 8192 bytes, got 1\n" +
				"gamespy4.plugins: contains a control character"},
		// No line inside an array of tables: the decoder keeps one line
		// per key path (the last element's).
		{"every bad master, each with its index",
			"[relay]\nupstream = \"x:1\"\n" +
				"[[quake3.masters]]\naddress = 5\nheartbeat = \"A\"\n" +
				"[[quake3.masters]]\naddress = \"m:1\"\nheartbeat = \"a b\"\nfoo = 1\n" +
				"[[quake3.masters]]\naddress = \"m:1\"\nheartbeat = [\"A\"]\n",
			"quake3.masters[0].address: want a string, got an integer\n" +
				"quake3.masters[1].foo: unknown key\n" +
				`quake3.masters[1].heartbeat: want printable ASCII without spaces, \ ; or ", got "a b"; e.g. "DarkPlaces", "QuakeArena-1" or "EnemyTerritory-1"` + "\n" +
				"quake3.masters[2].heartbeat: want a string, got an array"},
		{"a bad info value beside a reserved key",
			"[quake3.info]\nhostname = \"x\"\nk = 5\n",
			"quake3.info.hostname: queryd sets \"hostname\" itself (from the state and the [quake3] keys)\n" +
				"quake3.info.k: want a string, got an integer (line 3)"},
	}
	for _, c := range cases {
		_, err := parse(c.text)
		if err == nil || noLines(err.Error()) != noLines(c.want) {
			t.Errorf("%s:\n%v\nwant\n%s", c.name, err, c.want)
		}
	}
}

// Unknown keys are reported wherever they are: in a table, in a table
// under a table, in an array of tables, in an inline table.
func TestUnknownKeys(t *testing.T) {
	for text, want := range map[string]string{
		"[a2s]\nfoo = 1\n":                      "a2s.foo: unknown key",
		"[a2s.deep]\nx = 1\n":                   "a2s.deep: unknown key",
		"[listen]\nfoo.bar = 1\n":               "listen.foo: unknown key",
		"[quake3]\ninfo = {k = \"v\"}\nx = 1\n": "quake3.x: unknown key",
		"[relay]\nupstream = \"x:1\"\n[[quake3.masters]]\naddress = \"m:1\"\nheartbeat = \"A\"\nfoo = 1\n":     "quake3.masters[0].foo: unknown key",
		"[relay]\nupstream = \"x:1\"\n[quake3]\nmasters = [{address = \"m:1\", heartbeat = \"A\", foo = 1}]\n": "quake3.masters[0].foo: unknown key",
		"[quaek3]\nenabled = true\n": "quaek3: unknown table (did you mean quake3?)",
		"nosuch = 1\n":               "nosuch: unknown table",
	} {
		if _, err := parse(text); err == nil || noLines(err.Error()) != noLines(want) {
			t.Errorf("%q: %v; want %s", text, err, want)
		}
	}
}

// Malformed values of every decode path: the error names the key (and the
// element), says what is wanted and what was found.
func TestMalformedValues(t *testing.T) {
	cases := []struct{ text, want string }{
		// [listen] udp: a list of IP:PORT, each element checked on its own.
		{"[listen]\nudp = [\"0.0.0.0:1\", \"x\"]",
			`listen.udp[1]: want IP:PORT such as "0.0.0.0:27015" or "[::]:27015", got "x"`},
		{"[listen]\nudp = [\"0.0.0.0:1\", 5, \"localhost:1\", \"0.0.0.0:1\", \"[::]:1\", \"[::]:1\"]",
			`listen.udp[1]: want IP:PORT such as "0.0.0.0:27015" or "[::]:27015", got an integer` + "\n" +
				`listen.udp[2]: want IP:PORT such as "0.0.0.0:27015" or "[::]:27015", got "localhost:1"` + "\n" +
				`listen.udp[3]: "0.0.0.0:1" is listed twice` + "\n" +
				`listen.udp[5]: "[::]:1" is listed twice`},
		{"[listen]\nudp = [\"1.2.3.4:99999\"]",
			`listen.udp[0]: want IP:PORT such as "0.0.0.0:27015" or "[::]:27015", got "1.2.3.4:99999"`},
		{"[listen]\nudp = [\"0.0.0.0\"]",
			`listen.udp[0]: want IP:PORT such as "0.0.0.0:27015" or "[::]:27015", got "0.0.0.0"`},
		{"[listen]\nudp = [[\"0.0.0.0:1\"]]",
			`listen.udp[0]: want IP:PORT such as "0.0.0.0:27015" or "[::]:27015", got an array`},
		{"[listen]\nudp = []", "listen.udp: at least one address is needed"},
		{"[listen]\nudp = \"0.0.0.0:1\"", `listen.udp: want a list of "IP:PORT" strings such as ["0.0.0.0:27015"], got a string`},
		{"[listen]\nudp = {a = 1}", `listen.udp: want a list of "IP:PORT" strings such as ["0.0.0.0:27015"], got a table`},
		// Enums.
		{"[listen]\nsocket = \"fast\"", `listen.socket: want "batch" or "uring" (Linux), or "portable", got "fast" (line 2)`},
		{"[log]\nformat = \"xml\"", `log.format: want text or json, got "xml" (line 2)`},
		{"[sagl]\nplayers = \"all\"", `sagl.players: want "list", "count" or "none", got "all" (line 2)`},
		// [feed] mode: octal permissions in a string.
		{"[feed]\nmode = \"0777x\"", `feed.mode: want octal permissions as a string, such as "0660", got "0777x"`},
		{"[feed]\nmode = \"0o660\"", `feed.mode: want octal permissions as a string, such as "0660", got "0o660"`},
		{"[feed]\nmode = \"01777\"", `feed.mode: want octal permissions as a string, such as "0660", got "01777"`},
		{"[feed]\nmode = \"-1\"", `feed.mode: want octal permissions as a string, such as "0660", got "-1"`},
		{"[feed]\nmode = \"\"", `feed.mode: want octal permissions as a string, such as "0660", got ""`},
		{"[feed]\nmode = 432", `feed.mode: want octal permissions as a string, such as "0660", got an integer`},
		{"[feed]\nmode = \"0440\"", `feed.mode: want octal permissions that let the owner read and write, such as "0660", got "0440"`},
		// [log] level.
		{"[log]\nlevel = \"INFO\"", `log.level: want debug, info, warn or error, got "INFO"`},
		{"[xdp]\nmode = \"driver\"", `xdp.mode: want native or generic, got "driver" (line 2)`},
		{"[xdp]\ninterfaces = [\"eth0\", \"eth0\"]", `xdp.interfaces[1]: "eth0" is listed twice`},
		{"[xdp]\ninterfaces = [\"a/b\"]", `xdp.interfaces[0]: want an interface name such as "eth0" (1 to 15 characters, no '/', ':' or space), got "a/b"`},
		{"[log]\nlevel = 0", `log.level: want debug, info, warn or error, got an integer`},
		// netip.AddrPort: admin.listen, sagl.http.
		{"[admin]\nlisten = \"everywhere\"", `admin.listen: want IP:PORT such as "127.0.0.1:9273", or "" to turn it off, got "everywhere"`},
		{"[admin]\nlisten = \"localhost:9273\"", `admin.listen: want IP:PORT such as "127.0.0.1:9273", or "" to turn it off, got "localhost:9273"`},
		{"[admin]\nlisten = 9273", `admin.listen: want IP:PORT such as "127.0.0.1:9273", or "" to turn it off, got an integer`},
		{"[admin]\nallowed_hosts = [\"status.example.org:443\"]", `admin.allowed_hosts[0]: want a host name such as "status.example.org" (letters, digits, '-' and '.', no port), got "status.example.org:443"`},
		{"[admin]\nallowed_hosts = [\"ok.example\", \"\"]", `admin.allowed_hosts[1]: want a host name such as "status.example.org" (letters, digits, '-' and '.', no port), got ""`},
		{"[admin]\nallowed_hosts = [\"http://x\"]", `admin.allowed_hosts[0]: want a host name such as "status.example.org" (letters, digits, '-' and '.', no port), got "http://x"`},
		{"[sagl]\nhttp = \"127.0.0.1\"", `sagl.http: want IP:PORT such as "127.0.0.1:8080", or "" to turn it off, got "127.0.0.1"`},
		{"[sagl]\nhttp = true", `sagl.http: want IP:PORT such as "127.0.0.1:8080", or "" to turn it off, got a boolean`},
		// netip.Addr: gamespy4.hostip.
		{"[gamespy4]\nhostip = \"example.org\"", `gamespy4.hostip: want an IP address such as "203.0.113.7" or "2001:db8::7", or "" for none, got "example.org"`},
		{"[gamespy4]\nhostip = \"203.0.113.7:25565\"", `gamespy4.hostip: want an IP address such as "203.0.113.7" or "2001:db8::7", or "" for none, got "203.0.113.7:25565"`},
		{"[gamespy4]\nhostip = 1.5", `gamespy4.hostip: want an IP address such as "203.0.113.7" or "2001:db8::7", or "" for none, got a float`},
		{"[gamespy4]\nhostip = \"fe80::1%eth0\"", `gamespy4.hostip: want an IP address without a zone, got "fe80::1%eth0"`},
		// Sizes and durations.
		{"[limits]\nper_ip_rate = \"12 parsecs\"", `limits.per_ip_rate: want a size such as "256KiB", "1MiB" or a number of bytes, got "12 parsecs" (line 2)`},
		{"[limits]\nper_ip_rate = -1", `limits.per_ip_rate: want a size of zero or more bytes, got -1 (line 2)`},
		{"[limits]\nper_ip_rate = 1.5", `limits.per_ip_rate: want a size in bytes (an integer, or a string such as "256KiB"), got a float (line 2)`},
		{"[limits]\nunproven_packet_rate = -1", `limits.unproven_packet_rate: want requests per second, 0 (no gate) or more, got -1 (line 2)`},
		{"[limits]\nunproven_packet_rate = \"fast\"", `limits.unproven_packet_rate: want an integer, got a string (line 2)`},
		{"[limits]\nunproven_packet_rate = 100\nunproven_packet_burst = 0", `limits.unproven_packet_burst: want at least 1 request, got 0 (line 3)`},
		{"[limits]\nproven_for = \"a while\"", `limits.proven_for: want a duration such as "60s" or "2m", got "a while" (line 2)`},
		{"[limits]\nproven_for = \"-1m\"", `limits.proven_for: want a duration of zero or more, got "-1m" (line 2)`},
		{"[listen]\nrecv_buffer = true", `listen.recv_buffer: want a size in bytes (an integer, or a string such as "256KiB"), got a boolean (line 2)`},
		{"[feed]\nstale_after = \"soon\"", `feed.stale_after: want a duration such as "60s" or "2m", got "soon" (line 2)`},
		{"[feed]\nstale_after = \"-1s\"", `feed.stale_after: want a duration of zero or more, got "-1s" (line 2)`},
		// Plain values of the wrong TOML type name both types.
		{"[listen]\nworkers = 1.5", "listen.workers: want an integer, got a float (line 2)"},
		{"[listen]\ngso = 1", "listen.gso: want a boolean, got an integer (line 2)"},
		{"[relay]\nupstream = 5", "relay.upstream: want a string, got an integer (line 2)"},
		{"[relay]\nopen_rate = \"2\"", "relay.open_rate: want a float, got a string (line 2)"},
		{"[feed]\ngroup = 1979-05-27", "feed.group: want a string, got a date-time (line 2)"},
		{"[a2s]\nenabled = \"yes\"", "a2s.enabled: want a boolean, got a string (line 2)"},
		{"[quake3]\nmasters = 5", "quake3.masters: want an array of tables, got an integer"},
		{"[relay]\nupstream = \"x:1\"\n[quake3]\nmasters = [1]", "quake3.masters[0]: want a table, got an integer"},
		{"[quake3.masters]\naddress = \"m:1\"", "quake3.masters: want an array of tables, got a table"},
		{"[quake3]\ninfo = 5", "quake3.info: want a table, got an integer"},
		{"[quake3]\ninfo = [\"a\"]", "quake3.info: want a table, got an array"},
		{"[limits]\ndeny = \"198.51.100.0/24\"", `limits.deny: want an array of prefixes such as ["198.51.100.0/24", "2001:db8::/32"], got a string`},
		{"[limits]\ndeny = [\"198.51.100.0/24\", \"bogus\"]", `limits.deny[1]: want a prefix such as "198.51.100.0/24" or "2001:db8::/32", or an address, got "bogus"`},
		{"[limits]\ndeny = [\"10.0.0.0/33\"]", `limits.deny[0]: want a prefix such as "198.51.100.0/24" or "2001:db8::/32", or an address, got "10.0.0.0/33"`},
		{"[limits]\ndeny = [5]", "limits.deny[0]: want a prefix as a string, got an integer"},
		{"[quake3.info.x]\ny = 1", "quake3.info.x: want a string, got a table (line 1)"},
		{"[quake3.info]\n\"a b\" = 5", `quake3.info."a b": want a string, got an integer (line 2)`},
		// A table given as a value, or a value where a table belongs.
		{"listen = 5", "listen: want a table, got an integer"},
		{"a2s = \"on\"", "a2s: want a table, got a string"},
		{"server = 1", "server: want a table of the state document's fields, got an integer"},
		{"server = [1]", "server: want a table of the state document's fields, got an array"},
	}
	for _, c := range cases {
		if _, err := parse(c.text + "\n"); err == nil || noLines(err.Error()) != noLines(c.want) {
			t.Errorf("%q:\n%v\nwant\n%s", c.text, err, c.want)
		}
	}
}

// A value given as a string or a number where the other belongs says so
// and still names the key (the decoder's own messages never leak Go types).
func TestNoGoTypesInErrors(t *testing.T) {
	for _, text := range []string{
		"[listen]\nworkers = 1.5", "[relay]\nupstream = 5", "[quake3.info]\nk = 5", "[quake3]\nmasters = 5",
		"[quake3]\nmasters = [1]", "[limits]\nper_ip_rate = 1.5", "[feed]\ngroup = {a = 1}", "[feed]\nmax_conns = [1]",
		"[quake3]\npacket_rate = true", "[listen]\nrecv_buffer = 1979-05-27T07:32:00Z",
	} {
		_, err := parse(text + "\n")
		if err == nil {
			t.Errorf("%q: accepted", text)
			continue
		}
		for _, goType := range []string{"int64", "float64", "map[", "[]", "slice", "interface", " any", "struct", "quake3.Master", "config."} {
			if strings.Contains(err.Error(), goType) {
				t.Errorf("%q: %v: names the Go type %q", text, err, goType)
			}
		}
	}
}
