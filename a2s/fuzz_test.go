package a2s

import (
	"testing"
)

// FuzzServe feeds arbitrary datagrams to the handler: it must never panic,
// never answer an unproven source with more bytes than it sent (except the
// configured INFO), and only answer what it claims.
func FuzzServe(f *testing.F) {
	for _, seed := range []string{
		"\xFF\xFF\xFF\xFFTSource Engine Query\x00",
		"\xFF\xFF\xFF\xFFTSource Engine Query\x00\x01\x02\x03\x04",
		"\xFF\xFF\xFF\xFFTSOURCE\x00",
		"\xFF\xFF\xFF\xFFU\xFF\xFF\xFF\xFF",
		"\xFF\xFF\xFF\xFFV\x00\x00\x00\x00",
		"\xFF\xFF\xFF\xFFA\x01\x02\x03\x04",
		"\xFF\xFF\xFF\xFFi",
		"\xFF\xFF\xFF\xFFW",
		"",
	} {
		f.Add([]byte(seed))
	}
	h, _ := newTestHandler(f, defaultCfg())
	scratch := make([]byte, 2048)
	f.Fuzz(func(t *testing.T, req []byte) {
		_, perr := ParseRequest(req, true)
		out, o := h.Serve(req, client, scratch, nil)
		if perr != nil && len(out) > 0 {
			t.Fatalf("answered a request the parser rejects: %v", perr)
		}
		if !o.Proven() {
			n := 0
			for _, d := range out {
				n += len(d)
			}
			if n > len(req) {
				t.Fatalf("unproven reply of %d bytes to a %d-byte request", n, len(req))
			}
		}
	})
}
