package sagl

import (
	"net/netip"
	"testing"
)

// TestValidToken: ValidToken (the proven-source tier's question) is true
// only for a request carrying the source's valid token.
func TestValidToken(t *testing.T) {
	is := testIssuer()
	h := NewHandler(Config{}, is)
	src := netip.MustParseAddrPort("198.51.100.7:27005")
	tok := is.Token(src.Addr())
	if !h.ValidToken(AppendRequest(nil, Request{Kind: KindInfo, Token: tok}), src) {
		t.Error("a request with the token: not valid")
	}
	for _, tk := range []uint32{0, tok + 1} {
		if h.ValidToken(AppendRequest(nil, Request{Kind: KindInfo, Token: tk}), src) {
			t.Errorf("token %d: valid", tk)
		}
	}
}
