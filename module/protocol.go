package module

import (
	"context"
	"net/netip"

	"github.com/queryd/queryd/dgram"
	"github.com/queryd/queryd/state"
)

// Protocol is a module's live handler: the UDP responder routes the
// datagrams it claims to Answer, and the daemon calls Update with every new
// state snapshot (under the store's lock: encode replies there, do no I/O).
// A Protocol that also implements io.Closer is closed when a reload
// replaces it and at shutdown.
type Protocol interface {
	// Name is the protocol's label in metrics and logs ("a2s").
	Name() string
	// Claims reports whether a datagram belongs to this protocol, from its
	// first bytes.
	Claims(p []byte) bool
	// Answer answers req from src by appending reply datagrams to out, in
	// scratch or in the handler's own immutable buffers, and says what it
	// did. It does not allocate.
	Answer(req []byte, src netip.AddrPort, scratch []byte, out [][]byte) ([][]byte, dgram.Outcome)
	// Update encodes the replies for a new snapshot.
	Update(s *state.Snapshot)
}

// Service is a part that runs beside the responder (SAGL's HTTP listener,
// Quake 3's master heartbeats). It acquires what it needs (a listening
// socket) when it is made, so that a start fails at once; Serve then runs
// it until ctx is done and returns nil, or returns the error that stopped it
// for good, which stops the daemon with that reason.
type Service interface {
	// Name is the service's label in logs ("sagl-http").
	Name() string
	// Serve runs the service until ctx is done.
	Serve(ctx context.Context) error
}
