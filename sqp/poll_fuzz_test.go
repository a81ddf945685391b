package sqp

import (
	"testing"

	"github.com/queryd/queryd/internal/polltest"
)

// FuzzFromResponse: whatever reply payload the client parses, its mapping
// is a valid state document.
func FuzzFromResponse(f *testing.F) {
	_, p, _ := ParseHeader(vector(f, "info_single_response"))
	f.Add(p)
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseResponse(b, pollChunks)
		if err != nil || r.Info == nil {
			return
		}
		polltest.Valid(t, FromResponse(r))
	})
}
