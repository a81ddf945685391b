package sagl

import (
	"time"

	"github.com/queryd/queryd/module"
)

// What the daemon tests (package sagl_test) may see of the module's
// unexported parts.

// HTTPService is the [sagl] http service.
type HTTPService = httpService

// AsHTTPService returns s as the SAGL HTTP service, or nil.
func AsHTTPService(s module.Service) *HTTPService {
	h, _ := s.(*httpService)
	return h
}

// MaxConns is the listener's cap ([sagl] http_max_conns).
func (h *httpService) MaxConns() int { return h.ln.Max }

// IdleTimeout is the server's keep-alive idle time ([sagl] http_idle_timeout).
func (h *httpService) IdleTimeout() time.Duration { return h.srv.IdleTimeout }

// LogoSettled reports whether the logo loader has loaded (or refused) the
// logo the latest snapshot asks for.
func (p *Protocol) LogoSettled() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.want == p.have && !p.loading
}
