package gamespy4

import (
	"testing"

	"github.com/queryd/queryd/internal/polltest"
)

// FuzzFromFull: whatever full stat the client parses, its mapping is a
// valid state document.
func FuzzFromFull(f *testing.F) {
	f.Add(append([]byte{0, 0, 0, 0, 1}, unhex(f, wikiFull)...))
	f.Add([]byte("\x00\x00\x00\x00\x01splitnum\x00\x80\x00maxplayers\x0099999\x00hostport\x00-1\x00\x00\x01player_\x00\x00\xff\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		full, err := ParseFull(b, [4]byte{0, 0, 0, 1})
		if err != nil {
			return
		}
		polltest.Valid(t, FromFull(full))
	})
}
