package daemon

import (
	"fmt"
	"log/slog"
	"net"
	"os"
	"time"
)

// The systemd readiness protocol (sd_notify(3)), without a dependency: one
// datagram of "KEY=VALUE" lines to the Unix socket named by $NOTIFY_SOCKET
// (an abstract socket when the name starts with '@'). Outside systemd the
// variable is unset and every call is a no-op. deploy/systemd/queryd.service
// runs queryd as Type=notify.

// sdNotify sends one notification. It returns false, nil when $NOTIFY_SOCKET
// is unset.
func sdNotify(state string) (bool, error) {
	path := os.Getenv("NOTIFY_SOCKET")
	if path == "" {
		return false, nil
	}
	if path[0] != '/' && path[0] != '@' {
		return false, fmt.Errorf("sd_notify: NOTIFY_SOCKET %q is neither a path nor an abstract name", path)
	}
	// net maps a leading '@' to the abstract namespace (a leading NUL) on Linux.
	conn, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		return false, fmt.Errorf("sd_notify: %w", err)
	}
	defer conn.Close()
	conn.SetWriteDeadline(time.Now().Add(time.Second))
	if _, err := conn.Write([]byte(state)); err != nil {
		return false, fmt.Errorf("sd_notify %s: %w", path, err)
	}
	return true, nil
}

// notify sends state to systemd and logs a failure (a readiness message
// that does not arrive makes systemd kill the service at its start timeout,
// so the log should say why).
func notify(log *slog.Logger, state string) {
	if _, err := sdNotify(state); err != nil {
		log.Warn("systemd notification failed", "err", err)
	}
}

// notifyReady says queryd is listening (after start and after a reload).
func notifyReady(log *slog.Logger, protocols []string) {
	notify(log, fmt.Sprintf("READY=1\nSTATUS=answering %v\nMAINPID=%d", protocols, os.Getpid()))
}

// notifyReloading says a SIGHUP reload has begun; notifyReady ends it.
func notifyReloading(log *slog.Logger) { notify(log, "RELOADING=1\nSTATUS=reloading the config") }

// notifyStopping says queryd is shutting down.
func notifyStopping(log *slog.Logger) { notify(log, "STOPPING=1\nSTATUS=shutting down") }
