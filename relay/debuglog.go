package relay

import (
	"context"
	"log/slog"
	"net/netip"

	"github.com/queryd/queryd/internal/lograte"
)

// DebugLinesPerSecond is how many debug lines the relay logs a second
// (after a burst of as many): one per relayed datagram, session opened,
// ended or evicted. The lines over it are counted and the next line
// allowed is preceded by "relay: debug lines suppressed" with their number,
// so a flood cannot fill the disk.
const DebugLinesPerSecond = 50

// debugLog is the relay's per-datagram debug log. on is read once, when the
// relay is made ([log] level is set at start): when the logger is above
// debug, the relay's paths test one bool and log, allocate and lock nothing.
type debugLog struct {
	on  bool
	log *slog.Logger
	lim *lograte.Limiter
}

func newDebugLog(l *slog.Logger) debugLog {
	return debugLog{
		on:  l.Enabled(context.Background(), slog.LevelDebug),
		log: l,
		lim: lograte.New(DebugLinesPerSecond, DebugLinesPerSecond),
	}
}

// line logs msg with args at debug level, within the rate (check on first:
// the arguments allocate).
func (d *debugLog) line(msg string, args ...any) {
	ok, suppressed := d.lim.Allow()
	if !ok {
		return
	}
	if suppressed > 0 {
		d.log.Debug("relay: debug lines suppressed", "lines", suppressed, "max_per_second", DebugLinesPerSecond)
	}
	d.log.Debug(msg, args...)
}

// datagram logs one datagram p of client's session as it is relayed
// (before its write, which may still drop it: the drop is counted in
// queryd_relay_dropped_total): dir is "upstream" (to the game server) or
// "downstream" (to the client).
func (d *debugLog) datagram(client netip.AddrPort, dir string, p []byte) {
	d.line("relay: datagram", "client", client, "dir", dir, "what", commandOf(p), "bytes", len(p))
}

// maxCommand is the longest Quake 3 command name commandOf returns.
const maxCommand = 32

// commandOf names a datagram for the debug log: the Quake 3 connectionless
// command when p is one (the first word after FF FF FF FF, as sent:
// "getstatus", "getChallenge", "infoResponse"), "connectionless" when no
// word follows, else "game" (in-game traffic).
func commandOf(p []byte) string {
	if len(p) < 4 || p[0] != 0xFF || p[1] != 0xFF || p[2] != 0xFF || p[3] != 0xFF {
		return "game"
	}
	w := p[4:]
	n := 0
	for n < len(w) && n < maxCommand && commandByte(w[n]) {
		n++
	}
	if n == 0 {
		return "connectionless"
	}
	return string(w[:n])
}

// commandByte reports whether c may be part of a command name.
func commandByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}
