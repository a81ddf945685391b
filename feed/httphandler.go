package feed

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/queryd/queryd/netlimit"
	"github.com/queryd/queryd/state"
)

// route is what an endpoint does for each method it takes.
type route struct {
	ops   map[string]string // method → op
	allow string            // the Allow header of a 405
}

// routes are the HTTP feed's endpoints.
var routes = map[string]route{
	"/v1/state": {ops: map[string]string{http.MethodGet: "get", http.MethodPut: "replace", http.MethodPatch: "patch"}, allow: "GET, PUT, PATCH"},
	"/v1/ping":  {ops: map[string]string{http.MethodPost: "ping"}, allow: "POST"},
	"/v1/peer":  {ops: map[string]string{http.MethodPost: "peer"}, allow: "POST"},
	"/v1/wake":  {ops: map[string]string{http.MethodPost: "wake"}, allow: "POST"},
}

// httpError is an answer other than 200, with its status code.
type httpError struct {
	code int
	msg  string
}

func (e *httpError) Error() string { return e.msg }

func fail(code int, format string, args ...any) *httpError {
	return &httpError{code: code, msg: fmt.Sprintf(format, args...)}
}

// ServeHTTP answers one request: the Host (421 unless an IP address or
// localhost: no web page rebinding its name to loopback may reach it),
// then the token (401, nothing else is told), both as soon as the headers
// are read, with Connection: close and the body never read; then the
// endpoint (404) and method (405), the body (413 over MaxLine, 400 when it
// is not what the op takes), then the op as the socket carries it out: 200
// {"ok":true,…} or 400 with the socket's error. A request with the token
// proves its connection (netlimit.Shedder.Prove).
func (h *HTTPServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !netlimit.HostAllowed(r.Host, nil) {
		h.refuse(w, r, http.StatusMisdirectedRequest, "use the feed's address itself (an IP address or localhost) as the host")
		return
	}
	if !h.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="queryd feed"`)
		h.refuse(w, r, http.StatusUnauthorized, "missing or wrong token: send Authorization: Bearer <the token in [feed] http_token_file>")
		return
	}
	if c, ok := r.Context().Value(connKey{}).(net.Conn); ok {
		h.shed.Prove(c)
	}
	code, rep := http.StatusOK, Reply{}
	m, herr := h.message(w, r)
	if herr == nil {
		if rep = h.feed.do(m); !rep.OK {
			code = http.StatusBadRequest
		}
	} else {
		code, rep = herr.code, Reply{Error: herr.msg}
	}
	if code == http.StatusMethodNotAllowed {
		w.Header().Set("Allow", routes[r.URL.Path].allow)
	}
	h.write(w, code, rep)
}

// refuse answers r with code and msg before reading its body, and closes
// the connection right after (netlimit.CloseUnread).
func (h *HTTPServer) refuse(w http.ResponseWriter, r *http.Request, code int, msg string) {
	w.Header().Set("Connection", "close")
	defer netlimit.CloseUnread(w, r)()
	h.write(w, code, Reply{Error: msg})
}

// write writes rep as the JSON answer with code, and counts it.
func (h *HTTPServer) write(w http.ResponseWriter, code int, rep Reply) {
	h.codes.add(code)
	b, err := json.Marshal(rep)
	if err != nil {
		b = []byte(`{"ok":false,"error":"internal: cannot encode the reply"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	w.Write(append(b, '\n'))
}

// message checks a request and turns it into the message it carries.
func (h *HTTPServer) message(w http.ResponseWriter, r *http.Request) (message, *httpError) {
	rt, ok := routes[r.URL.Path]
	if !ok {
		return message{}, fail(http.StatusNotFound, "no endpoint %q: want /v1/state (GET, PUT, PATCH), /v1/ping, /v1/peer or /v1/wake (POST)", r.URL.Path)
	}
	op, ok := rt.ops[r.Method]
	if !ok {
		return message{}, fail(http.StatusMethodNotAllowed, "%s %s: want %s", r.Method, r.URL.Path, rt.allow)
	}
	body, herr := readBody(w, r, op)
	if herr != nil {
		return message{}, herr
	}
	raw := map[string]any{}
	switch {
	case op == "replace" || op == "patch":
		if len(body) == 0 {
			return message{}, fail(http.StatusBadRequest, "empty body: %s needs a state document (a JSON object)", op)
		}
		doc, err := decodeBody(body)
		if err != nil {
			return message{}, fail(http.StatusBadRequest, "state: %v", err)
		}
		raw["state"] = doc
	case len(body) > 0:
		var err error
		if raw, err = decodeBody(body); err != nil {
			return message{}, fail(http.StatusBadRequest, "body: %v", err)
		}
	}
	m, err := messageOf(op, raw, false)
	if err != nil {
		return message{}, fail(http.StatusBadRequest, "%v", err)
	}
	return m, nil
}

// authorized reports whether r carries the token (compared in constant
// time), in the Bearer scheme, whose name is case-insensitive (RFC 7235).
func (h *HTTPServer) authorized(r *http.Request) bool {
	scheme, tok, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	return ok && strings.EqualFold(scheme, "Bearer") && hashToken([]byte(strings.TrimSpace(tok))).equal(h.token.Load())
}

// readBody reads at most MaxLine bytes of body, after checking its type:
// JSON, or for a patch also a merge patch.
func readBody(w http.ResponseWriter, r *http.Request, op string) ([]byte, *httpError) {
	if r.ContentLength > MaxLine {
		return nil, fail(http.StatusRequestEntityTooLarge, "body of %d bytes: longer than %d bytes", r.ContentLength, MaxLine)
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxLine))
	var tooLong *http.MaxBytesError
	switch {
	case errors.As(err, &tooLong):
		return nil, fail(http.StatusRequestEntityTooLarge, "body longer than %d bytes", MaxLine)
	case err != nil:
		return nil, fail(http.StatusBadRequest, "reading the body: %v", err)
	}
	if ct := r.Header.Get("Content-Type"); len(body) > 0 && ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if !(err == nil && (mt == "application/json" || op == "patch" && mt == "application/merge-patch+json")) {
			want := "application/json"
			if op == "patch" {
				want = "application/merge-patch+json or application/json"
			}
			return nil, fail(http.StatusBadRequest, "Content-Type %q: want %s", ct, want)
		}
	}
	return body, nil
}

// decodeBody decodes a body that must be one JSON object.
func decodeBody(b []byte) (map[string]any, error) {
	if !utf8.Valid(b) {
		return nil, errors.New("body is not valid UTF-8")
	}
	return state.DecodeJSON(b)
}
