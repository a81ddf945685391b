package sagl

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// HTTP serves the query over HTTP for websites: GET / and GET /query return
// the same JSON a UDP query gets, GET /logo the logo with its SHA-256 as the
// ETag (If-None-Match answers 304; no logo is 404). Every response allows
// any origin (CORS). Other paths are 404, other methods 405. While Silent
// reports true (the feed is stale) it answers 503, like UDP answers nothing.
type HTTP struct {
	// Current returns the handler whose replies are served (it may change on
	// reload); nil answers 503.
	Current func() *Handler
	// Silent, when set, is asked for every request.
	Silent func(now time.Time) bool
}

// ServeHTTP answers one HTTP request.
func (x *HTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Access-Control-Allow-Origin", "*")
	hd.Set("X-Content-Type-Options", "nosniff")
	path := r.URL.Path
	if path != "/" && path != "/query" && path != "/logo" {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hd.Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	var e *encoded
	if x.Current != nil {
		if h := x.Current(); h != nil {
			e = h.enc.Load()
		}
	}
	if e == nil || (x.Silent != nil && x.Silent(time.Now())) {
		http.Error(w, "no server state", http.StatusServiceUnavailable)
		return
	}
	hd.Set("Cache-Control", "no-cache")
	if path == "/logo" {
		serveLogo(w, r, e.logo)
		return
	}
	hd.Set("Content-Type", "application/json")
	hd.Set("Content-Length", strconv.Itoa(len(e.json)))
	if r.Method == http.MethodGet {
		w.Write(e.json)
	}
}

func serveLogo(w http.ResponseWriter, r *http.Request, logo *Logo) {
	if logo == nil {
		http.Error(w, "no logo", http.StatusNotFound)
		return
	}
	etag := `"` + logo.Hex() + `"`
	hd := w.Header()
	hd.Set("ETag", etag)
	if etagMatches(r.Header.Get("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	hd.Set("Content-Type", logo.Type)
	hd.Set("Content-Length", strconv.Itoa(len(logo.Data)))
	if r.Method == http.MethodGet {
		w.Write(logo.Data)
	}
}

// etagMatches applies If-None-Match (a list of tags, weak or strong, or *).
func etagMatches(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == etag {
			return true
		}
	}
	return false
}
