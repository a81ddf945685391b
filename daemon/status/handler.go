package status

import (
	"embed"
	"net/http"
	"strconv"
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
	mux.Handle("GET /{$}", file("page/index.html", "text/html; charset=utf-8"))
	mux.Handle("GET /status.js", file("page/status.js", "text/javascript; charset=utf-8"))
	mux.Handle("GET /status.css", file("page/status.css", "text/css; charset=utf-8"))
	mux.HandleFunc("GET /status.json", s.serveJSON)
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
	b := s.JSON()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.Write(b)
}
