package sqp

import (
	"net/netip"
	"testing"

	"github.com/queryd/queryd/challenge"
)

// TestValidToken: ValidToken (the proven-source tier's question) is true
// only for a query carrying the source's valid token.
func TestValidToken(t *testing.T) {
	is := challenge.NewWithKey([16]byte{1, 2, 3}, nil)
	h := NewHandler(Config{GameType: "t"}, is)
	src := netip.MustParseAddrPort("198.51.100.7:27005")
	tok := is.Token(src.Addr())
	if !h.ValidToken(AppendQuery(nil, tok, 1), src) {
		t.Error("a query with the token: not valid")
	}
	if h.ValidToken(AppendQuery(nil, tok+1, 1), src) || h.ValidToken(ChallengeRequest[:], src) || h.ValidToken([]byte{1}, src) {
		t.Error("a wrong token, a challenge request or garbage: valid")
	}
}
