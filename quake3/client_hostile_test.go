package quake3

import (
	"github.com/queryd/queryd/internal/udptest"

	"strings"
	"testing"
	"time"
)

// Malicious or confused Quake 3 servers on loopback: every call ends by its
// timeout with the error that names what the server did.

// hostileServer answers each request on a loopback socket with the
// datagrams answer returns, until the test ends.
func hostileServer(t *testing.T, answer func(req string) []string) *Client {
	t.Helper()
	addr := udptest.Answer(t, func(req []byte) [][]byte {
		var out [][]byte
		for _, d := range answer(string(req)) {
			out = append(out, []byte(d))
		}
		return out
	})
	c := udptest.Dial(t, Dial, addr)
	c.Timeout = udptest.HostileTimeout
	return c
}

// challengeOf returns the challenge a getinfo or getstatus request carries.
func challengeOf(req string) string {
	_, ch, _ := strings.Cut(req, " ")
	return ch
}

// A stale reply (another challenge) and other packets before the answer
// are dropped: the client keeps reading and takes the answer.
func TestClientDropsStaleReplies(t *testing.T) {
	c := hostileServer(t, func(req string) []string {
		return []string{
			q3 + "print\nhello",
			q3 + "infoResponse\n\\challenge\\stale\\hostname\\old",
			q3 + "infoResponse\n\\challenge\\" + challengeOf(req) + "\\hostname\\new",
		}
	})
	inf, err := c.Info()
	if err != nil || inf.Get("hostname") != "new" {
		t.Fatalf("info %v, %v", inf, err)
	}
}

// Replies that never echo the challenge, or that do not parse, are bad
// answers (the first at the deadline, the second at once).
func TestClientBadReplies(t *testing.T) {
	for name, c := range map[string]struct {
		reply func(req string) string
		want  string
	}{
		"no echo":      {func(string) string { return q3 + "infoResponse\n\\challenge\\stale" }, "does not echo the challenge"},
		"other packet": {func(string) string { return q3 + "print\nhi" }, `want a reply starting "\xff\xff\xff\xffinfoResponse\n"`},
		"bad info":     {func(req string) string { return q3 + "infoResponse\n\\challenge\\" + challengeOf(req) + "\\k" }, "info string"},
	} {
		t.Run(name, func(t *testing.T) {
			cl := hostileServer(t, func(req string) []string { return []string{c.reply(req)} })
			start := time.Now()
			_, err := cl.Info()
			udptest.InTime(t, start)
			udptest.WantBadAnswer(t, err, c.want)
		})
	}
}
