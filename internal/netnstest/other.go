//go:build !linux

package netnstest

import (
	"context"
	"errors"
	"net"
	"net/http"
	"testing"
	"time"
)

// Net is the test network; outside Linux it cannot be made.
type Net struct {
	ServerNS, ClientNS string
	ServerIf, ClientIf string
}

var errLinux = errors.New("netnstest: network namespaces need Linux")

// New skips the test outside Linux.
func New(t testing.TB) *Net {
	t.Helper()
	t.Skip("the XDP test network needs Linux (network namespaces, XDP): skipped")
	return nil
}

// Do fails outside Linux.
func Do(string, func() error) error { return errLinux }

// Enter fails the test outside Linux.
func Enter(t testing.TB, _ string) func() {
	t.Helper()
	t.Fatal(errLinux)
	return func() {}
}

// HTTPClient returns a client whose every request fails outside Linux.
func HTTPClient(_ string, timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, Transport: &http.Transport{
		DialContext: func(context.Context, string, string) (net.Conn, error) { return nil, errLinux },
	}}
}
