//go:build linux

package responder

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// steer opens the address's sockets for proven sources (as many as the
// ordinary ones, in the same reuseport group) and hands both sets to
// cfg.Steer. If steering fails, the extra sockets are closed again (the
// group is as it would be unsteered) and the address goes on, said in the
// log; only failing to open a socket is an error.
func (l *batchListener) steer(cfg SocketConfig) error {
	for range l.fds {
		fd, err := openBatchSocket(l.addr, l.v6, cfg.RecvBuffer)
		if err != nil {
			return fmt.Errorf("proven sources' socket: %w", err)
		}
		l.pfds = append(l.pfds, fd)
	}
	c, err := cfg.Steer(l.pfds, l.fds)
	if err != nil {
		for _, fd := range l.pfds {
			unix.Close(fd)
		}
		l.pfds = nil
		cfg.Logger.Warn("proven sources share this address's sockets with every other source: steering them to their own failed", "udp", l.addr.String(), "err", err)
		return nil
	}
	l.steered = c
	return nil
}
