package gamespy4

import (
	"encoding/binary"
	"net/netip"
	"testing"

	"github.com/queryd/queryd/challenge"
)

// TestValidToken: ValidToken (the proven-source tier's question) is true
// only for a stat carrying the source's valid wire token.
func TestValidToken(t *testing.T) {
	is := challenge.NewWithKey([16]byte{1, 2, 3}, nil)
	h := NewHandler(Config{}, is)
	src := netip.MustParseAddrPort("198.51.100.7:27005")
	stat := func(tok uint32) []byte {
		return binary.BigEndian.AppendUint32([]byte{0xFE, 0xFD, TypeStat, 1, 2, 3, 4}, tok)
	}
	if !h.ValidToken(stat(WireToken(is.Token(src.Addr()))), src) {
		t.Error("a stat with the token: not valid")
	}
	if h.ValidToken(stat(WireToken(is.Token(src.Addr()))+1), src) || h.ValidToken([]byte{0xFE, 0xFD, TypeHandshake, 1, 2, 3, 4}, src) {
		t.Error("a wrong token or a handshake: valid")
	}
}
