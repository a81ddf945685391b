package quake3

import (
	"bufio"
	"encoding/hex"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// capture is one request to a real ioquake3 server and its reply (nil when
// it answered nothing), from testdata/ioquake3-replies.txt (OpenArena's
// dedicated server, Debian openarena-server 0.8.8, ioquake3 1.36, 2 bots).
type capture struct {
	req, reply []byte
}

func loadCaptures(t *testing.T) []capture {
	t.Helper()
	f, err := os.Open("testdata/ioquake3-replies.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []capture
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), " ")
		b, err := hex.DecodeString(v)
		switch k {
		case "REQUEST_HEX":
			out = append(out, capture{req: b})
		case "REPLY_HEX":
			out[len(out)-1].reply = b
		default:
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
	}
	if len(out) < 6 {
		t.Fatalf("only %d captures", len(out))
	}
	return out
}

// referenceCfg and referenceDoc mirror the captured server: its hostname,
// map, sv_maxclients, protocol and com_gamename, and its two engine-specific
// info keys as configured extras.
var referenceCfg = Config{GameName: "Quake3Arena", Protocol: 71, Extra: []KeyValue{{"voip", "opus"}, {"pure", "1"}}}

const referenceDoc = `{"name":"^1queryd ^7reference","map":"oa_dm1","max_players":12,
	"players":{"1":{"name":"Kyonshi","score":0,"ping":0,"bot":true}}}`

var playerLine = regexp.MustCompile(`^-?[0-9]+ [0-9]+ "[^"\n]*"$`)

// TestLikeIoquake3 compares queryd's replies with a real ioquake3 server's,
// request by request: the same requests are claimed (and the others not), the
// same header, an info string of the same shape and the same keys in
// infoResponse (challenge last, absent without an argument), statusResponse
// with the challenge first, a newline, then player lines of the same form.
func TestLikeIoquake3(t *testing.T) {
	h := handlerFor(t, referenceCfg, referenceDoc)
	for _, c := range loadCaptures(t) {
		// getchallenge is the connection handshake: the game server's (relayed).
		want := c.reply != nil && !strings.HasPrefix(string(c.req), q3+"getchallenge")
		if Claims(c.req) != want {
			t.Errorf("%q: claimed %v, want %v", c.req, Claims(c.req), want)
			continue
		}
		if !want {
			continue
		}
		r, err := ParseRequest(c.req)
		if err != nil {
			t.Fatalf("%q: %v", c.req, err)
		}
		got, _ := serve(t, h, string(c.req))
		switch r.Type {
		case TypeInfo:
			compareInfo(t, c, r, got)
		case TypeStatus:
			compareStatus(t, c, r, got)
		}
	}
}

func compareInfo(t *testing.T, c capture, r Request, got []byte) {
	theirs, err := ParseInfoResponse(c.reply)
	if err != nil {
		t.Fatalf("ioquake3 reply: %v", err)
	}
	ours, err := ParseInfoResponse(got)
	if err != nil {
		t.Fatalf("%q: our reply %q: %v", c.req, got, err)
	}
	a, b := slices.Sorted(slices.Values(theirs.Keys)), slices.Sorted(slices.Values(ours.Keys))
	if !slices.Equal(a, b) {
		t.Errorf("%q: infoResponse keys\n ours   %v\n theirs %v", c.req, b, a)
	}
	if got[len(got)-1] == '\n' || got[len(got)-1] == 0 {
		t.Errorf("%q: infoResponse ends in %q; ioquake3's has no terminator", c.req, got[len(got)-1])
	}
	if r.Challenge != nil && (ours.Keys[len(ours.Keys)-1] != "challenge" || theirs.Keys[len(theirs.Keys)-1] != "challenge") {
		t.Errorf("%q: challenge is not the last key: ours %v theirs %v", c.req, ours.Keys, theirs.Keys)
	}
	for _, k := range []string{"hostname", "mapname", "sv_maxclients", "protocol", "gamename", "gametype", "g_needpass", "g_humanplayers", "voip", "pure", "challenge"} {
		if ours.Get(k) != theirs.Get(k) {
			t.Errorf("%q: %s = %q, ioquake3 %q", c.req, k, ours.Get(k), theirs.Get(k))
		}
	}
}

func compareStatus(t *testing.T, c capture, r Request, got []byte) {
	for name, p := range map[string][]byte{"ioquake3": c.reply, "queryd": got} {
		st, err := ParseStatusResponse(p)
		if err != nil {
			t.Fatalf("%q: %s reply: %v", c.req, name, err)
		}
		if (r.Challenge != nil) != (st.Info.Get("challenge") != "") {
			t.Errorf("%q: %s challenge %q", c.req, name, st.Info.Get("challenge"))
		}
		if r.Challenge != nil && st.Info.Keys[0] != "challenge" {
			t.Errorf("%q: %s: challenge is not the first key: %v", c.req, name, st.Info.Keys)
		}
		for _, k := range []string{"sv_hostname", "mapname", "sv_maxclients", "g_needpass", "g_gametype", "gamename"} {
			if st.Info.Get(k) == "" {
				t.Errorf("%q: %s statusResponse lacks %s", c.req, name, k)
			}
		}
		_, rest, _ := strings.Cut(string(p[len(statusHeader):]), "\n")
		if !strings.HasSuffix(rest, "\n") {
			t.Errorf("%q: %s: player lines do not end in a newline", c.req, name)
		}
		for _, line := range strings.Split(strings.TrimSuffix(rest, "\n"), "\n") {
			if !playerLine.MatchString(line) {
				t.Errorf("%q: %s: player line %q", c.req, name, line)
			}
		}
	}
	_, theirs, _ := strings.Cut(string(c.reply[len(statusHeader):]), "\n")
	_, ours, _ := strings.Cut(string(got[len(statusHeader):]), "\n")
	if ours != theirs {
		t.Errorf("%q: player lines %q, ioquake3 %q", c.req, ours, theirs)
	}
}

// TestRealClientRequests: the requests qstat and gamedig send are answered.
func TestRealClientRequests(t *testing.T) {
	b, err := os.ReadFile("testdata/client-requests.txt")
	if err != nil {
		t.Fatal(err)
	}
	h := handlerFor(t, referenceCfg, referenceDoc)
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		hx, ok := strings.CutPrefix(line, "REQ q3 ")
		if !ok {
			continue
		}
		req, err := hex.DecodeString(hx)
		if err != nil {
			t.Fatal(err)
		}
		got, outcome := serve(t, h, string(req))
		if got == nil || outcome != "answered" {
			t.Errorf("%q: not answered (%s)", req, outcome)
		}
		n++
	}
	if n < 4 {
		t.Errorf("only %d requests", n)
	}
}
