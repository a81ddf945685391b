package feed

import (
	"encoding/json"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/queryd/queryd/state"
)

// FuzzHTTPFeed: any request to the HTTP feed's handler gets one of its
// status codes and a JSON reply, never a panic; only a 200 may change the
// state.
func FuzzHTTPFeed(f *testing.F) {
	for _, seed := range []struct{ method, path, ctype, body string }{
		{"PUT", "/v1/state", "application/json", `{"name":"x","players":{"1":{"name":"a"}}}`},
		{"PATCH", "/v1/state", "application/merge-patch+json", `{"players":{"1":null}}`},
		{"GET", "/v1/state", "", ""},
		{"POST", "/v1/ping", "", "{}"},
		{"POST", "/v1/peer", "application/json", `{"port":27960}`},
		{"PUT", "/v1/state", "text/plain", "\xff"},
		{"DELETE", "/x", "", "[]"},
	} {
		f.Add(seed.method, seed.path, seed.ctype, []byte(seed.body))
	}
	store, err := state.NewStore(map[string]any{"name": "base"}, nil)
	if err != nil {
		f.Fatal(err)
	}
	s := &Server{cfg: withDefaults(Config{}), store: store}
	s.log = s.cfg.Logger
	h := &HTTPServer{feed: s}
	h.token.Store(hashToken([]byte(testToken)))
	f.Fuzz(func(t *testing.T, method, path, ctype string, body []byte) {
		if !validMethod(method) || !strings.HasPrefix(path, "/") || strings.ContainsAny(path, " \r\n\t?#") || strings.ContainsAny(ctype, "\r\n") {
			return
		}
		if _, err := url.ParseRequestURI(path); err != nil {
			return
		}
		req := httptest.NewRequest(method, path, strings.NewReader(string(body)))
		req.Header.Set("Authorization", "Bearer "+testToken)
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		v := store.Snapshot().Version
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if !slices.Contains(HTTPCodes, w.Code) {
			t.Fatalf("status %d", w.Code)
		}
		var rep Reply
		if err := json.Unmarshal(w.Body.Bytes(), &rep); err != nil {
			t.Fatalf("reply %q: %v", w.Body.Bytes(), err)
		}
		if rep.OK != (w.Code == 200) || (w.Code != 200 && store.Snapshot().Version != v) {
			t.Fatalf("status %d, reply %+v, version %d -> %d", w.Code, rep, v, store.Snapshot().Version)
		}
	})
}

// validMethod is a method token httptest.NewRequest accepts.
func validMethod(m string) bool {
	if m == "" || len(m) > 16 {
		return false
	}
	for _, c := range m {
		if c < 'A' || c > 'Z' {
			return false
		}
	}
	return true
}
