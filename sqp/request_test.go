package sqp

import "testing"

// Only the exact request shapes are claimed: game traffic that merely
// starts with 00 or 01 must reach the relay.
func TestClaims(t *testing.T) {
	for hx, want := range map[string]bool{
		"00 00 00 00 00":             true,
		"01 12 34 56 78 00 01 1F":    true,
		"01 00 00 00 00 00 01 00":    true, // token 0 and no chunks: claimed, then ignored or answered
		"01 12 34 56 78 00 01 FF":    true, // unknown chunks: claimed, then malformed
		"00 00 00 00":                false,
		"00 00 00 00 00 00":          false,
		"00 00 00 00 01":             false,
		"00 01 00 00 00":             false,
		"01 00 00 00 00":             false,
		"01 12 34 56 78 00 02 01":    false, // version 2
		"01 12 34 56 78 01 01 01":    false, // version 257
		"01 12 34 56 78 00 01":       false,
		"01 12 34 56 78 00 01 01 00": false,
		"02 12 34 56 78 00 01 01":    false,
		"FF FF FF FF 54":             false,
		"":                           false,
	} {
		if got := Claims(unhex(t, hx)); got != want {
			t.Errorf("Claims(%s) = %v, want %v", hx, got, want)
		}
	}
	// Every request go-svrquery's tests capture is claimed.
	for _, name := range []string{"challenge_success_request", "info_single_request", "info_multi_request", "rules_request", "player_request", "team_request"} {
		if !Claims(vector(t, name)) {
			t.Errorf("%s: not claimed", name)
		}
	}
}

func TestParseRequest(t *testing.T) {
	r, err := ParseRequest(vector(t, "player_request"))
	if err != nil || r != (Request{Type: TypeQuery, Token: 1, Chunks: ChunkPlayerInfo}) {
		t.Fatalf("player_request: %+v, %v", r, err)
	}
	if r, err := ParseRequest(ChallengeRequest[:]); err != nil || r.Type != TypeChallenge {
		t.Fatalf("challenge: %+v, %v", r, err)
	}
	for c := 0; c < 256; c++ {
		_, err := ParseRequest(AppendQuery(nil, 5, byte(c)))
		if (err == nil) != (c <= AllChunks) {
			t.Errorf("chunks %#02x: err %v", c, err)
		}
	}
	for _, hx := range []string{"00 00 00 00 01", "01 00 00 00 01 00 02 01", "01"} {
		if _, err := ParseRequest(unhex(t, hx)); err == nil {
			t.Errorf("%s parsed", hx)
		}
	}
}

// The query request is byte for byte what go-svrquery sends.
func TestAppendQueryMatchesUpstream(t *testing.T) {
	if got, want := AppendQuery(nil, 1, ChunkServerRules), vector(t, "rules_request"); string(got) != string(want) {
		t.Fatalf("% x, want % x", got, want)
	}
	if want := vector(t, "challenge_success_request"); string(ChallengeRequest[:]) != string(want) {
		t.Fatalf("challenge % x, want % x", ChallengeRequest, want)
	}
}
