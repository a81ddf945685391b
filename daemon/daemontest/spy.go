package daemontest

import (
	"sync"

	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/daemon"
	"github.com/queryd/queryd/module"
)

// Spy wraps a module and keeps what the daemon made of it, so that a
// module's own tests can reach the handler and services it runs: give the
// daemon &Spy{Module: m} instead of m.
type Spy struct {
	daemon.Module

	mu       sync.Mutex
	current  func() module.Protocol
	services []module.Service
}

var (
	_ daemon.Module   = (*Spy)(nil)
	_ daemon.Servicer = (*Spy)(nil)
)

// Services makes the wrapped module's services (none unless it is a
// daemon.Servicer) and keeps them, and the daemon's function giving the
// module's live handler.
func (s *Spy) Services(sec config.Section, env module.Env, current func() module.Protocol) ([]module.Service, error) {
	var svcs []module.Service
	var err error
	if sm, ok := s.Module.(daemon.Servicer); ok {
		svcs, err = sm.Services(sec, env, current)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.current = current
	s.services = append(s.services, svcs...)
	return svcs, err
}

// Live returns the module's live handler (a reload may replace it); nil
// while the module is off.
func (s *Spy) Live() module.Protocol {
	s.mu.Lock()
	current := s.current
	s.mu.Unlock()
	if current == nil {
		return nil
	}
	return current()
}

// Made returns the services the module made at start.
func (s *Spy) Made() []module.Service {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]module.Service(nil), s.services...)
}
