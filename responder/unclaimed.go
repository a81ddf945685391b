package responder

import (
	"context"
	"encoding/hex"
	"log/slog"
	"net/netip"

	"github.com/queryd/queryd/internal/lograte"
)

// unclaimedHead is how many of an unclaimed datagram's first bytes the
// debug log shows, in hex.
const unclaimedHead = 16

// unclaimedLog samples the datagrams no protocol claims (without relay
// mode: counted as outcome "unknown") into the debug log, at most one line
// a second, so an operator sees what clients try (a Bedrock ping, a Quake 2
// "status", GameSpy 1's \status\) without a flood filling the disk.
type unclaimedLog struct{ lim *lograte.Limiter }

func newUnclaimedLog() unclaimedLog { return unclaimedLog{lim: lograte.New(1, 1)} }

// debugEnabled reports whether l logs at debug level (asked once per
// receive batch, so that the datagrams of a batch test a bool).
func debugEnabled(l *slog.Logger) bool { return l.Enabled(context.Background(), slog.LevelDebug) }

// log logs req from src unless a line went out less than a second ago; the
// line says how many were not logged since the last one.
func (u unclaimedLog) log(l *slog.Logger, req []byte, src netip.AddrPort) {
	ok, skipped := u.lim.Allow()
	if !ok {
		return
	}
	l.Debug("unclaimed datagram: no protocol claims it (counted as unknown)",
		"src", src,
		"bytes", len(req),
		"head", hex.EncodeToString(req[:min(len(req), unclaimedHead)]),
		"not_logged_since_last", skipped)
}
