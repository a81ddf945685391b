package sagl

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

func httpGet(t *testing.T, srv *httptest.Server, method, path string, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	r, err := http.NewRequest(method, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	res, err := srv.Client().Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if res.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("%s %s: %d without Access-Control-Allow-Origin: *", method, path, res.StatusCode)
	}
	return res, body
}

func TestHTTP(t *testing.T) {
	logo := testLogo(t)
	h := newHandler(t, exampleDoc, logo)
	srv := httptest.NewServer(&HTTP{Current: func() *Handler { return h }})
	defer srv.Close()
	js, _ := h.JSON()
	for _, path := range []string{"/", "/query"} {
		res, body := httpGet(t, srv, "GET", path, nil)
		if res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/json" || !bytes.Equal(body, js) {
			t.Errorf("GET %s: %d %s %q", path, res.StatusCode, res.Header.Get("Content-Type"), body)
		}
	}
	etag := `"` + logoHex + `"`
	res, body := httpGet(t, srv, "GET", "/logo", nil)
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "image/png" || res.Header.Get("ETag") != etag || !bytes.Equal(body, logo.Data) {
		t.Errorf("GET /logo: %d %q %q, %d bytes", res.StatusCode, res.Header.Get("Content-Type"), res.Header.Get("ETag"), len(body))
	}
	for _, inm := range []string{etag, `"other", ` + etag, "W/" + etag, "*"} {
		res, body = httpGet(t, srv, "GET", "/logo", map[string]string{"If-None-Match": inm})
		if res.StatusCode != 304 || len(body) != 0 || res.Header.Get("ETag") != etag {
			t.Errorf("If-None-Match %s: %d, %d bytes", inm, res.StatusCode, len(body))
		}
	}
	res, _ = httpGet(t, srv, "GET", "/logo", map[string]string{"If-None-Match": `"0ca18ac0"`})
	if res.StatusCode != 200 {
		t.Errorf("stale If-None-Match: %d", res.StatusCode)
	}
	res, body = httpGet(t, srv, "HEAD", "/query", nil)
	if res.StatusCode != 200 || len(body) != 0 {
		t.Errorf("HEAD /query: %d", res.StatusCode)
	}
}

func TestHTTPErrors(t *testing.T) {
	h := newHandler(t, exampleDoc, nil)
	var silent atomic.Bool
	srv := httptest.NewServer(&HTTP{Current: func() *Handler { return h }, Silent: func(time.Time) bool { return silent.Load() }})
	defer srv.Close()
	tests := []struct {
		method, path string
		code         int
	}{
		{"GET", "/logo", 404}, // no logo
		{"GET", "/nope", 404},
		{"GET", "/query/", 404},
		{"GET", "/logo.png", 404},
		{"POST", "/nope", 404},
		{"POST", "/", 405},
		{"PUT", "/query", 405},
		{"DELETE", "/logo", 405},
		{"OPTIONS", "/", 405},
	}
	for _, tt := range tests {
		res, _ := httpGet(t, srv, tt.method, tt.path, nil)
		if res.StatusCode != tt.code {
			t.Errorf("%s %s: %d, want %d", tt.method, tt.path, res.StatusCode, tt.code)
		}
		if tt.code == 405 && res.Header.Get("Allow") != "GET, HEAD" {
			t.Errorf("%s %s: Allow %q", tt.method, tt.path, res.Header.Get("Allow"))
		}
	}
	silent.Store(true)
	if res, _ := httpGet(t, srv, "GET", "/query", nil); res.StatusCode != 503 {
		t.Errorf("stale feed: %d, want 503", res.StatusCode)
	}
	empty := httptest.NewServer(&HTTP{Current: func() *Handler { return nil }})
	defer empty.Close()
	if res, _ := httpGet(t, empty, "GET", "/", nil); res.StatusCode != 503 {
		t.Errorf("no handler: %d, want 503", res.StatusCode)
	}
}
