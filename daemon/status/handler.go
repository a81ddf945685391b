package status

import (
	"embed"
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

//go:embed page
var page embed.FS

// ContentSecurityPolicy is sent with every response of the page: no script,
// style or image but the page's own files, no connection but to the admin
// address itself, no frames, forms or base URL.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Register adds the page's routes to mux: GET / (the page), its script and
// style, and GET /status.json. The admin listener serves them behind its
// Host check with the headers below on every response (Headers).
func (s *Sampler) Register(mux *http.ServeMux) {
	RegisterHost(mux, Host{
		Sampler: func(name string) *Sampler {
			if name != "" {
				return nil
			}
			return s
		},
		Servers: func() []byte {
			b, _ := json.Marshal(ServerList{Schema: SchemaVersion, Now: time.Now().UTC(), Servers: []Row{s.Row("main", time.Now())}})
			return append(b, '\n')
		},
	})
}

// Headers sets the security headers of every admin response: the page's
// Content-Security-Policy, nosniff, no referrer, no framing, no caching.
func Headers(h http.Header) {
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-store")
}

// file serves one embedded file.
func file(name, contentType string) http.Handler {
	b, err := page.ReadFile(name)
	if err != nil {
		panic("status: the embedded page lacks " + name) // a build mistake
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.Write(b)
	})
}

// serveJSON serves the document the last sample encoded: a request costs
// a write, however many clients ask.
func (s *Sampler) serveJSON(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, s.JSON())
}

// writeJSON writes the encoded document b.
func writeJSON(w http.ResponseWriter, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.Write(b)
}
