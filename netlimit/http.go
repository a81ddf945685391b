package netlimit

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"
)

// HostAllowed reports whether a request's Host names a listener on this
// machine as a browser on it would: an IP address, localhost, or one of
// names (lower case, without a trailing dot). Anything else is what a web
// page that rebinds its own name to 127.0.0.1 sends (DNS rebinding): the
// admin listener and the HTTP feed answer it 421.
func HostAllowed(host string, names map[string]bool) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if host == "" || strings.EqualFold(host, "localhost") {
		return true
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return true
	}
	return names[strings.ToLower(strings.TrimSuffix(host, "."))]
}

// HasBody reports whether r declares a body (a Content-Length other than
// 0, or a transfer coding).
func HasBody(r *http.Request) bool { return r.ContentLength != 0 || len(r.TransferEncoding) > 0 }

// CloseUnread is for a handler that answers r without reading its body
// (a refusal, a GET that carries one): call it before writing the
// response; it returns a function to call after writing it. The response
// says Connection: close, and net/http neither waits for the body before
// sending it nor after: the connection's reads end at once, so a client
// trickling a declared body holds the connection for no longer than the
// answer takes. Without a body it does nothing.
func CloseUnread(w http.ResponseWriter, r *http.Request) (after func()) {
	if !HasBody(r) {
		return func() {}
	}
	w.Header().Set("Connection", "close")
	return func() {
		rc := http.NewResponseController(w)
		rc.Flush()
		rc.SetReadDeadline(time.Now())
	}
}
