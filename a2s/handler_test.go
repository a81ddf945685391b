package a2s

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"testing"
	"time"

	"github.com/queryd/queryd/challenge"
	"github.com/queryd/queryd/dgram"
)

var (
	client  = netip.MustParseAddrPort("127.0.0.1:50000")
	other   = netip.MustParseAddrPort("127.0.0.2:50000")
	testKey = [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newTestHandler(t testing.TB, cfg Config) (*Handler, *clock) {
	t.Helper()
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	h := NewHandler(cfg, challenge.NewWithKey(testKey, c.now), c.now)
	h.Update(snapshotOf(t, `{"name":"srv","map":"m","max_players":8,
		"players":{"1":{"name":"Alice","score":3}},"rules":{"a":"1"}}`, c.t))
	return h, c
}

func defaultCfg() Config {
	return Config{AppID: DefaultAppID, Protocol: DefaultProtocol, InfoChallenge: true, Compat: true, GamePort: 27015}
}

func serve(h *Handler, req []byte, src netip.AddrPort) ([][]byte, dgram.Outcome) {
	return h.Answer(req, src, make([]byte, 2048), nil)
}

func infoRequest(token []byte) []byte {
	r := append([]byte{0xFF, 0xFF, 0xFF, 0xFF, 'T'}, "Source Engine Query\x00"...)
	return append(r, token...)
}

func le(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }

func TestInfoNeedsChallenge(t *testing.T) {
	h, _ := newTestHandler(t, defaultCfg())
	req := infoRequest(nil)
	out, o := serve(h, req, client)
	if o != dgram.Challenged || len(out) != 1 || len(out[0]) != 9 {
		t.Fatalf("unproven INFO: outcome %v, %d datagrams", o, len(out))
	}
	ch := out[0]
	if !bytes.Equal(ch[:5], []byte{0xFF, 0xFF, 0xFF, 0xFF, 'A'}) {
		t.Fatalf("challenge % x", ch)
	}
	if len(ch) >= len(req) {
		t.Fatalf("challenge (%d B) must be smaller than the request (%d B)", len(ch), len(req))
	}
	out, o = serve(h, infoRequest(ch[5:9]), client)
	if o != dgram.Answered || out[0][4] != ReplyInfo {
		t.Fatalf("INFO with token: %v % x", o, out[0][:5])
	}
	// The token is bound to the IP address, not the port.
	port2 := netip.AddrPortFrom(client.Addr(), 1)
	if _, o = serve(h, infoRequest(ch[5:9]), port2); o != dgram.Answered {
		t.Fatalf("same IP, other port: %v", o)
	}
	if _, o = serve(h, infoRequest(ch[5:9]), other); o != dgram.Challenged {
		t.Fatalf("token from another IP: %v, want a new challenge", o)
	}
}

func TestInfoWithoutChallengeWhenConfigured(t *testing.T) {
	cfg := defaultCfg()
	cfg.InfoChallenge = false
	h, _ := newTestHandler(t, cfg)
	out, o := serve(h, infoRequest(nil), client)
	if o != dgram.AnsweredOpen || out[0][4] != ReplyInfo {
		t.Fatalf("%v", o)
	}
	// Extra bytes after the payload are accepted.
	if _, o = serve(h, infoRequest([]byte{1, 2}), client); o != dgram.AnsweredOpen {
		t.Fatalf("extra bytes: %v", o)
	}
}

func TestTokenExpires(t *testing.T) {
	h, c := newTestHandler(t, defaultCfg())
	out, _ := serve(h, []byte{0xFF, 0xFF, 0xFF, 0xFF, 'U', 0xFF, 0xFF, 0xFF, 0xFF}, client)
	tok := append([]byte{}, out[0][5:9]...)
	req := append([]byte{0xFF, 0xFF, 0xFF, 0xFF, 'U'}, tok...)
	c.t = c.t.Add(31 * time.Second)
	if _, o := serve(h, req, client); o != dgram.Answered {
		t.Fatalf("token after 31 s: %v, want still valid (previous epoch)", o)
	}
	c.t = c.t.Add(60 * time.Second)
	if _, o := serve(h, req, client); o != dgram.Challenged {
		t.Fatalf("token after 91 s: %v, want a new challenge", o)
	}
}

func TestPlayersAndRules(t *testing.T) {
	h, c := newTestHandler(t, defaultCfg())
	tok := le(h.issuer.Token(client.Addr()))
	out, o := serve(h, append([]byte{0xFF, 0xFF, 0xFF, 0xFF, 'U'}, tok...), client)
	if o != dgram.Answered {
		t.Fatal(o)
	}
	c.t = c.t.Add(5 * time.Second)
	ps, err := ParsePlayers(out[0])
	if err != nil || len(ps) != 1 || ps[0].Name != "Alice" || ps[0].Score != 3 {
		t.Fatalf("players %+v %v", ps, err)
	}
	out, _ = serve(h, append([]byte{0xFF, 0xFF, 0xFF, 0xFF, 'U'}, tok...), client)
	ps, _ = ParsePlayers(out[0])
	if ps[0].Duration != 5 {
		t.Fatalf("duration after 5 s = %v", ps[0].Duration)
	}
	out, o = serve(h, append([]byte{0xFF, 0xFF, 0xFF, 0xFF, 'V'}, tok...), client)
	rs, err := ParseRules(out[0])
	if o != dgram.Answered || err != nil || len(rs) != 1 || rs[0] != [2]string{"a", "1"} {
		t.Fatalf("rules %v %v %v", o, rs, err)
	}
	// -1 asks for a challenge.
	out, o = serve(h, []byte{0xFF, 0xFF, 0xFF, 0xFF, 'V', 0xFF, 0xFF, 0xFF, 0xFF}, client)
	if o != dgram.Challenged || !bytes.Equal(out[0][5:], tok) {
		t.Fatalf("-1: %v % x", o, out[0])
	}
}

// The steamlogger client (seed 000): "SOURCE\0", then FF FF FF FF 41 <token>.
func TestSteamloggerCompat(t *testing.T) {
	h, _ := newTestHandler(t, defaultCfg())
	out, o := serve(h, []byte("\xFF\xFF\xFF\xFFTSOURCE\x00"), client)
	if o != dgram.Challenged || len(out[0]) != 9 {
		t.Fatalf("compat INFO: %v", o)
	}
	retry := append([]byte{0xFF, 0xFF, 0xFF, 0xFF, 'A'}, out[0][5:9]...)
	out, o = serve(h, retry, client)
	if o != dgram.Answered || out[0][4] != ReplyInfo {
		t.Fatalf("compat retry: %v", o)
	}
	info, _ := ParseInfo(out[0])
	if info.Name != "srv" || info.Map != "m" {
		t.Fatalf("%+v", info)
	}
	if _, o = serve(h, retry, other); o != dgram.Challenged {
		t.Fatalf("compat retry from another IP: %v", o)
	}
	cfg := defaultCfg()
	cfg.Compat = false
	h2, _ := newTestHandler(t, cfg)
	if _, o = serve(h2, retry, client); o != dgram.Malformed {
		t.Fatalf("compat off: %v", o)
	}
}

func TestLegacyRequests(t *testing.T) {
	h, _ := newTestHandler(t, defaultCfg())
	if out, o := serve(h, []byte{0xFF, 0xFF, 0xFF, 0xFF, 'i'}, client); o != dgram.Ignored || len(out) != 0 {
		t.Fatalf("5-byte A2A_PING: %v", o)
	}
	out, o := serve(h, []byte{0xFF, 0xFF, 0xFF, 0xFF, 'i', 0}, client)
	if o != dgram.AnsweredOpen || !bytes.Equal(out[0], []byte{0xFF, 0xFF, 0xFF, 0xFF, 0x6A, 0x00}) {
		t.Fatalf("padded A2A_PING: %v % x", o, out)
	}
	if _, o := serve(h, []byte{0xFF, 0xFF, 0xFF, 0xFF, 'W'}, client); o != dgram.Ignored {
		t.Fatalf("5-byte GETCHALLENGE: %v", o)
	}
	cfg := defaultCfg()
	cfg.LegacyRequests = true
	h2, _ := newTestHandler(t, cfg)
	out, o = serve(h2, []byte{0xFF, 0xFF, 0xFF, 0xFF, 'W'}, client)
	if o != dgram.Challenged || len(out[0]) != 9 || out[0][4] != 'A' {
		t.Fatalf("GETCHALLENGE with legacy_requests: %v", o)
	}
}

func TestMalformed(t *testing.T) {
	h, _ := newTestHandler(t, defaultCfg())
	for name, req := range map[string][]byte{
		"short header":        {0xFF, 0xFF, 0xFF},
		"info no payload":     {0xFF, 0xFF, 0xFF, 0xFF, 'T'},
		"info wrong payload":  append([]byte{0xFF, 0xFF, 0xFF, 0xFF, 'T'}, "Source Engine Querx\x00"...),
		"info cut payload":    append([]byte{0xFF, 0xFF, 0xFF, 0xFF, 'T'}, "Source Engine"...),
		"player no challenge": {0xFF, 0xFF, 0xFF, 0xFF, 'U'},
		"rules short token":   {0xFF, 0xFF, 0xFF, 0xFF, 'V', 1, 2},
		"unknown type":        {0xFF, 0xFF, 0xFF, 0xFF, 'Z', 0, 0, 0, 0},
		"split header":        {0xFE, 0xFF, 0xFF, 0xFF, 'T'},
	} {
		out, o := serve(h, req, client)
		if o != dgram.Malformed || len(out) != 0 {
			t.Errorf("%s: outcome %v with %d datagrams, want malformed and nothing", name, o, len(out))
		}
	}
}

func TestParseRequestVectors(t *testing.T) {
	// Requests captured from real clients on loopback (gamedig 5.3.3, go-a2s 1.0.3).
	for _, tc := range []struct {
		hex  string
		typ  byte
		tok  uint32
		have bool
	}{
		{"ffffffff54536f7572636520456e67696e6520517565727900", 'T', NoChallenge, false},
		{"ffffffff54536f7572636520456e67696e6520517565727900c6fccc46", 'T', 0x46ccfcc6, true},
		{"ffffffff55c6fccc46", 'U', 0x46ccfcc6, true},
		{"ffffffff56ffffffff", 'V', NoChallenge, true},
	} {
		r, err := ParseRequest(unhex(t, tc.hex), true)
		if err != nil || r.Type != tc.typ || r.Challenge != tc.tok || r.HasToken != tc.have {
			t.Errorf("%s: %+v %v", tc.hex, r, err)
		}
	}
}

func TestClaims(t *testing.T) {
	for req, want := range map[string]bool{
		"\xFF\xFF\xFF\xFFTSource": true, "\xFF\xFF\xFF\xFFU": true, "\xFF\xFF\xFF\xFFV": true,
		"\xFF\xFF\xFF\xFFW": true, "\xFF\xFF\xFF\xFFi": true, "\xFF\xFF\xFF\xFFi\x00\x00": true,
		"\xFF\xFF\xFF\xFFA\x01\x02\x03\x04": true, "\xFF\xFF\xFF\xFFA": false,
		"\xFF\xFF\xFF\xFFipAuthorize 1 accept KEY": false, "\xFF\xFF\xFF\xFFinfoResponse": false,
		"\xFF\xFF\xFF\xFFgetinfo": false, "\xFF\xFF\xFF\xFF": false, "\xFE\xFD\x09": false, "SAGQ": false,
	} {
		if Claims([]byte(req)) != want {
			t.Errorf("Claims(%q) != %v", req, want)
		}
	}
}
