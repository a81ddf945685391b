package sagl

import (
	"encoding/json"
	"testing"

	"github.com/queryd/queryd/internal/polltest"
)

// FuzzFromInfo: whatever JSON the client decodes, its mapping is a valid
// state document.
func FuzzFromInfo(f *testing.F) {
	f.Add([]byte(richJSON))
	f.Add([]byte(`{"players":{"max":-1,"list":[{"name":"\u0000"}]},"links":{"":"http://x"},"values":{"k":1e999},"protocol":-5}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if checkJSON(b) != nil {
			return
		}
		var in Info
		if json.Unmarshal(b, &in) != nil {
			return
		}
		polltest.Valid(t, FromInfo(&in))
	})
}
