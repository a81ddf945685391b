package status

import (
	"embed"
	"encoding/json"
	"net"
	"net/http"
	"strings"
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
// style, and GET /status.json.
func (s *Sampler) Register(mux *http.ServeMux) {
	mux.Handle("GET /{$}", guard(file("page/index.html", "text/html; charset=utf-8")))
	mux.Handle("GET /status.js", guard(file("page/status.js", "text/javascript; charset=utf-8")))
	mux.Handle("GET /status.css", guard(file("page/status.css", "text/css; charset=utf-8")))
	mux.Handle("GET /status.json", guard(http.HandlerFunc(s.serveJSON)))
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

func (s *Sampler) serveJSON(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(s.Report(time.Now()))
}

// guard sets the page's security headers and refuses a request whose Host
// is a name other than localhost: the admin listener answers on an address
// (reached directly or through an SSH tunnel), and a page of another site
// that rebinds its own name to 127.0.0.1 must not read the status through
// the operator's browser.
func guard(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", ContentSecurityPolicy)
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "no-referrer")
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("Cache-Control", "no-store")
		if !allowedHost(r.Host) {
			http.Error(w, "status page: use the admin address itself (an IP address or localhost) as the host", http.StatusMisdirectedRequest)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// allowedHost reports whether host (with or without a port) is an IP
// address or localhost.
func allowedHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	return net.ParseIP(host) != nil
}
