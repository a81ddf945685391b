package daemon

import (
	"fmt"
	"sync"

	"github.com/queryd/queryd/config"
)

// holds is what the host's servers hold: the addresses each listens on or
// takes ([listen] udp and divert, [feed] http, the modules' listeners).
// No two servers of one process ever share one, also across the wildcard
// (config.Overlaps): a server's own SO_REUSEPORT workers bind its address
// several times, but another server's socket there would split the
// queries between them. config.ReloadHost refuses such files already; this
// is the daemon's own check, made when a server acquires its sockets.
type holds struct {
	mu sync.Mutex
	by map[string][]config.Bind // server name → what it holds
}

// take records what server name holds under cfg, or refuses it when
// another server holds an overlapping address.
func (h *holds) take(name string, cfg *config.Config) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	binds := cfg.Binds()
	for other, theirs := range h.by {
		if other == name {
			continue
		}
		for _, b := range binds {
			for _, o := range theirs {
				if b.Network == o.Network && config.Overlaps(b.Addr, o.Addr) {
					return fmt.Errorf("%s: %s %s overlaps %s %s of the running server %q: two servers cannot listen on one address", b.Key, b.Network, b.Addr, o.Network, o.Addr, other)
				}
			}
		}
	}
	if h.by == nil {
		h.by = map[string][]config.Bind{}
	}
	h.by[name] = binds
	return nil
}

// release forgets what server name holds (it stopped).
func (h *holds) release(name string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.by, name)
}
