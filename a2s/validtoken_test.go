package a2s

import (
	"encoding/binary"
	"net/netip"
	"testing"

	"github.com/queryd/queryd/challenge"
)

// TestValidToken: ValidToken (the proven-source tier's question) is true
// only for a request carrying the source's valid token.
func TestValidToken(t *testing.T) {
	is := challenge.NewWithKey(testKey, nil)
	h := NewHandler(defaultCfg(), is, nil)
	src := netip.MustParseAddrPort("198.51.100.7:27005")
	tok := binary.LittleEndian.AppendUint32(nil, is.Token(src.Addr()))
	info := []byte("\xFF\xFF\xFF\xFFTSource Engine Query\x00")
	for _, c := range []struct {
		name string
		req  []byte
		want bool
	}{
		{"INFO with the token", append(append([]byte{}, info...), tok...), true},
		{"PLAYER with the token", append([]byte("\xFF\xFF\xFF\xFFU"), tok...), true},
		{"INFO without a token", info, false},
		{"INFO with -1", append(append([]byte{}, info...), 0xFF, 0xFF, 0xFF, 0xFF), false},
		{"INFO with another's token", append(append([]byte{}, info...), binary.LittleEndian.AppendUint32(nil, is.Token(netip.MustParseAddr("198.51.100.8")))...), false},
		{"garbage", []byte("\xFF\xFF\xFF"), false},
	} {
		if got := h.ValidToken(c.req, src); got != c.want {
			t.Errorf("%s: ValidToken = %v, want %v", c.name, got, c.want)
		}
	}
}
