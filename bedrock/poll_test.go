package bedrock

import (
	"context"
	"net/netip"
	"reflect"
	"testing"
	"time"

	"github.com/queryd/queryd/internal/polltest"
	"github.com/queryd/queryd/internal/udptest"
	"github.com/queryd/queryd/module"
	"github.com/queryd/queryd/state"
)

// vanillaPong is a Bedrock Dedicated Server's status string (1.14.60).
const vanillaPong = "MCPE;Dedicated Server;390;1.14.60;0;10;13253860892328930865;Bedrock level;Survival;1;19132;19133;"

// A vanilla Bedrock Dedicated Server's pong is read exactly: every field
// in its common field or in the "bedrock" object, and no rules (the pong
// has none); the front's pong says what the server's says.
func TestFromPongVanilla(t *testing.T) {
	p, err := ParsePong(pongOf(7, 13253860892328930865, vanillaPong))
	if err != nil {
		t.Fatal(err)
	}
	s := polltest.Valid(t, FromPong(p))
	if s.Name != "Dedicated Server" || s.Map != "Bedrock level" || s.GameVersion != "1.14.60" || s.MaxPlayers != 10 ||
		s.Gamemode != "Survival" || s.Protocol != 390 || s.GamePort != 19132 || len(s.Players) != 0 {
		t.Errorf("%+v", s)
	}
	if got := polltest.Rules(s); len(got) != 0 {
		t.Errorf("rules %v, want none", got)
	}
	want := state.BedrockFields{Edition: "MCPE", Protocol: 390, ServerID: 13253860892328930865, GameModeNumber: 1, IPv6Port: 19133}
	if b := s.Bedrock; b == nil || !reflect.DeepEqual(*b, want) {
		t.Errorf("bedrock object %+v, want %+v", b, want)
	}
	front := vanillaConfig
	front.GUID = MinGUID
	if got := StatusString(front, s); got != vanillaPong {
		t.Errorf("the front's status string\n %q\nwant the server's\n %q", got, vanillaPong)
	}
	if pong, err := ParsePong(EncodePong(front, s)); err != nil || pong.ServerGUID != 13253860892328930865 {
		t.Errorf("the front's pong header GUID: %v %v", pong, err)
	}
}

// Odd pongs are fitted to the state: values out of range are kept in the
// "bedrock" object's "other", never as rules; the player count becomes as
// many unnamed players (at most 4,096).
func TestFromPongOddValues(t *testing.T) {
	for status, check := range map[string]func(t *testing.T, s *state.Snapshot){
		"MCPE;a;1;v;3;10;": func(t *testing.T, s *state.Snapshot) {
			if len(s.Players) != 3 || s.Players[0].Name != "" || s.GamePort != 0 {
				t.Errorf("%+v", s)
			}
		},
		"MCPE;a;-5;v;99999;70000;x;m;g;1;70000;0;": func(t *testing.T, s *state.Snapshot) {
			o := otherOf(s)
			if len(s.Players) != state.MaxPlayers || s.MaxPlayers != 0 || o["max_players"] != "70000" || len(s.Rules) != 0 ||
				o["protocol"] != "-5" || o["players"] != "99999" || o["ipv4_port"] != "70000" || o["server_id"] != "x" {
				t.Errorf("%+v %v", s, o)
			}
		},
		// a protocol past the state's int32 (found by FuzzFromPong): kept as text
		"MCPE;a;80000000000;v;0;1;": func(t *testing.T, s *state.Snapshot) {
			if o := otherOf(s); s.Protocol != 0 || s.Bedrock.Protocol != -1 || o["protocol"] != "80000000000" {
				t.Errorf("protocol %d, other %v", s.Protocol, o)
			}
		},
	} {
		p, err := ParsePong(pongOf(1, 1, status))
		if err != nil {
			t.Fatal(err)
		}
		check(t, polltest.Valid(t, FromPong(p)))
	}
}

// otherOf is the "bedrock" object's "other" as a map.
func otherOf(s *state.Snapshot) map[string]string {
	out := map[string]string{}
	if s.Bedrock != nil {
		for _, r := range s.Bedrock.Other {
			out[r.Key] = r.Value
		}
	}
	return out
}

// The poll's ping time is its nonce: a pong that echoes another time (a
// forged or late one) is dropped, and the pong that echoes it is read.
func TestPollTimeChecked(t *testing.T) {
	addr := udptest.Answer(t, func(req []byte) [][]byte {
		if len(req) < 9 {
			return nil
		}
		tm := uint64(req[1])<<56 | uint64(req[2])<<48 | uint64(req[3])<<40 | uint64(req[4])<<32 | uint64(req[5])<<24 | uint64(req[6])<<16 | uint64(req[7])<<8 | uint64(req[8])
		return [][]byte{pongOf(uint64(time.Now().UnixMilli()), 5, "MCPE;FORGED;1;v;0;1;"), pongOf(tm, 5, vanillaPong)}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	got, err := Module{}.Poll(ctx, netip.MustParseAddrPort(addr), module.PollOptions{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if s := polltest.Valid(t, got.Doc); s.Name != "Dedicated Server" {
		t.Fatalf("name %q: a pong to another ping was read", s.Name)
	}
}
