package main

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"
)

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var session = [4]byte{0x01, 0x02, 0x03, 0x04}

// The request bytes, from the protocol documents (Valve "Server queries",
// the Minecraft wiki "Query" page, the SAGL document, qstat's getstatus).
func TestRequestBytes(t *testing.T) {
	cases := []struct {
		proto string
		ask   bool
		want  string
	}{
		{"a2s_info", true, "FFFFFFFF 54 536F7572636520456E67696E6520517565727900"},
		{"a2s_info", false, "FFFFFFFF 54 536F7572636520456E67696E6520517565727900 78563412"},
		{"a2s_player", true, "FFFFFFFF 55 FFFFFFFF"},
		{"a2s_player", false, "FFFFFFFF 55 78563412"},
		{"gs4_full", true, "FEFD 09 01020304"},
		{"gs4_full", false, "FEFD 00 01020304 12345678 FFFFFF01"},
		{"q3_status", false, "FFFFFFFF 676574737461747573 0A"},
		{"sagl_info", true, "53414751 01 01 0000 00000000 00000000" + strings.Repeat("00", 48)},
		{"sagl_info", false, "53414751 01 01 0000 78563412 00000000" + strings.Repeat("00", 48)},
	}
	for _, c := range cases {
		p, err := lookupProto(c.proto)
		if err != nil {
			t.Fatal(err)
		}
		got := p.request(nil, 0x12345678, session)
		if c.ask {
			got = p.ask(nil, session)
		}
		if want := unhex(t, c.want); !bytes.Equal(got, want) {
			t.Errorf("%s ask=%v:\n got % x\nwant % x", c.proto, c.ask, got, want)
		}
	}
}

func TestClassify(t *testing.T) {
	cases := []struct {
		proto string
		reply string
		kind  replyKind
		tok   uint32
	}{
		{"a2s_info", "FFFFFFFF 41 0A08590B", replyChallenge, 0x0B59080A},
		{"a2s_info", "FFFFFFFF 49 11 00", replyComplete, 0},
		{"a2s_player", "FEFFFFFF 01000000 02 00 E004 AABB", replyFragment, 0},
		{"a2s_player", "FEFFFFFF 01000000 02 01 E004 AABB", replyComplete, 0},
		{"a2s_player", "FFFFFFFF 41 0A08", replyComplete, 0}, // too short for a challenge
		{"gs4_full", "09 01020304 393531333330373900", replyChallenge, 95133079},
		{"gs4_full", "09 01020304 00", replyComplete, 0},                      // no digits
		{"gs4_full", "09 01020304 3935313333303739", replyComplete, 0},        // no NUL
		{"gs4_full", "09 01020304 34323934393637323936 00", replyComplete, 0}, // 4294967296
		{"gs4_full", "09 0A0B0C0D 393531333330373900", replyComplete, 0},      // another session
		{"gs4_full", "00 01020304 73706C69746E756D00", replyComplete, 0},
		{"q3_status", "FFFFFFFF 737461747573526573706F6E73650A", replyComplete, 0},
		{"sagl_info", "53414752 01 00 0000 EFBEADDE", replyChallenge, 0xDEADBEEF},
		{"sagl_info", "53414752 01 01 0000 11111111 00100000 0000 0300 7B", replyFragment, 0},
		{"sagl_info", "53414752 01 01 0000 11111111 00100000 0200 0300 7D", replyComplete, 0},
		{"sagl_info", "514442460200" + "7878", replyFragment, 0}, // fixed server, 2 to come
		{"a2s_info", "514442460000" + "7878", replyComplete, 0},  // fixed server, last
	}
	for _, c := range cases {
		p, _ := lookupProto(c.proto)
		kind, tok := classify(p, unhex(t, c.reply), session)
		if kind != c.kind || tok != c.tok {
			t.Errorf("%s %s: got kind %d token %#x, want %d %#x", c.proto, c.reply, kind, tok, c.kind, c.tok)
		}
	}
}

func TestFixedReply(t *testing.T) {
	r := newFixedReply(10, 3)
	want := []string{"QDBF\x02xxxxx", "QDBF\x01xxxxx", "QDBF\x00xxxxx"}
	for i, d := range r {
		if string(d) != want[i] {
			t.Errorf("datagram %d: %q, want %q", i, d, want[i])
		}
	}
}

func TestUnknownProto(t *testing.T) {
	if _, err := lookupProto("a2s_rules"); err == nil || !strings.Contains(err.Error(), "a2s_info, a2s_player, gs4_full, q3_status, sagl_info") {
		t.Fatalf("got %v", err)
	}
}
