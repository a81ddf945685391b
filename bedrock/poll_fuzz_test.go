package bedrock

import (
	"testing"

	"github.com/queryd/queryd/internal/polltest"
)

// FuzzFromPong: whatever pong the client parses, its mapping is a valid
// state document.
func FuzzFromPong(f *testing.F) {
	f.Add(pongOf(7, 1, vanillaPong))
	f.Add(pongOf(7, 1, "MCPE;\xff;-1;v;-3;99999999;;;;;;;"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParsePong(b)
		if err != nil {
			return
		}
		polltest.Valid(t, FromPong(p))
	})
}
