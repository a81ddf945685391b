package quake3

import (
	"testing"

	"github.com/queryd/queryd/internal/polltest"
)

// FuzzFromStatus: whatever statusResponse the quake3 client parses, its
// mapping (with stable ids) is a valid state document.
func FuzzFromStatus(f *testing.F) {
	f.Add(ioquake3Status(f))
	f.Add([]byte("\xFF\xFF\xFF\xFFstatusResponse\n\\sv_maxclients\\99999\\\\x\n-1 -1 \"\"\n"))
	f.Add([]byte("\xFF\xFF\xFF\xFFstatusResponse\n\\sv_hostname\\\xff\x00\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := ParseStatusResponse(b)
		if err != nil {
			return
		}
		doc := FromStatus(st)
		polltest.Valid(t, doc)
	})
}
