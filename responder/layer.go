package responder

import "fmt"

// SocketLayer is how a Server reads and answers its UDP sockets: [listen]
// socket in the config, parsed into this type there (UnmarshalText) and
// carried as it down to the receive loops. doc.go says why each exists.
type SocketLayer string

// The socket layers.
const (
	// SocketAuto picks the default: SocketBatch on Linux, else
	// SocketPortable.
	SocketAuto SocketLayer = ""
	// SocketBatch: per-core SO_REUSEPORT sockets outside the Go netpoller,
	// recvmmsg/sendmmsg in batches, one locked thread per socket (Linux).
	SocketBatch SocketLayer = "batch"
	// SocketPortable: one net.UDPConn per address read by Workers goroutines
	// (any OS).
	SocketPortable SocketLayer = "portable"
	// SocketUring: the batch layer's sockets read and answered through one
	// io_uring per CPU, one system call a round for every socket (Linux
	// 6.1+; the batch layer where io_uring is refused).
	SocketUring SocketLayer = "uring"
)

// UnmarshalText accepts "", "batch", "uring" or "portable".
func (s *SocketLayer) UnmarshalText(b []byte) error {
	switch v := SocketLayer(b); v {
	case SocketAuto, SocketBatch, SocketPortable, SocketUring:
		*s = v
		return nil
	}
	return fmt.Errorf("want \"batch\" or \"uring\" (Linux), or \"portable\", got %q", b)
}

// MarshalText is s as written in the config.
func (s SocketLayer) MarshalText() ([]byte, error) { return []byte(s), nil }
