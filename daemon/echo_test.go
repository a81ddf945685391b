package daemon_test

import (
	"context"
	"errors"
	"net/netip"
	"sync/atomic"

	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/daemon"
	"github.com/queryd/queryd/dgram"
	"github.com/queryd/queryd/module"
	"github.com/queryd/queryd/state"
)

// echoModule is a protocol module made for the daemon's tests (the daemon
// names no real protocol): "ECHO" datagrams are answered with [echo]
// prefix and the state's name; with [echo] service = true it runs a
// service that fails when fail delivers an error. envs, when set, gets the
// Env its Services call was given.
type echoModule struct {
	fail chan error
	envs chan module.Env
}

type echoSection struct {
	Enabled bool   `toml:"enabled"`
	Prefix  string `toml:"prefix"`
	Service bool   `toml:"service"`
}

var (
	_ daemon.Module   = echoModule{}
	_ module.Protocol = (*echoProto)(nil)
	_ module.Service  = (*echoService)(nil)
)

func (echoModule) Name() string               { return "echo" }
func (echoModule) NewSection() config.Section { return &echoSection{Enabled: true, Prefix: "name="} }
func (s *echoSection) On() bool               { return s.Enabled }

func (s *echoSection) Check(_ *config.Config, errs *config.Errors) {
	if len(s.Prefix) > 16 {
		errs.Add("echo.prefix", "at most 16 bytes, got %d", len(s.Prefix))
	}
}

func (echoModule) Build(sec config.Section, env module.Env) (module.Protocol, error) {
	return &echoProto{prefix: sec.(*echoSection).Prefix}, nil
}

func (m echoModule) Services(sec config.Section, env module.Env, current func() module.Protocol) ([]module.Service, error) {
	if m.envs != nil {
		m.envs <- env
	}
	if !sec.(*echoSection).Service {
		return nil, nil
	}
	return []module.Service{&echoService{fail: m.fail}}, nil
}

// echoProto answers "ECHO" with the reply encoded at the last Update.
type echoProto struct {
	prefix string
	reply  atomic.Pointer[[]byte]
}

func (p *echoProto) Name() string         { return "echo" }
func (p *echoProto) Claims(b []byte) bool { return len(b) >= 4 && string(b[:4]) == "ECHO" }
func (p *echoProto) Update(s *state.Snapshot) {
	b := []byte(p.prefix + s.Name)
	p.reply.Store(&b)
}
func (p *echoProto) Answer(req []byte, src netip.AddrPort, scratch []byte, out [][]byte) ([][]byte, dgram.Outcome) {
	return append(out, *p.reply.Load()), dgram.AnsweredOpen
}

// echoService runs until its context ends, or fails with what fail sends.
type echoService struct{ fail chan error }

func (s *echoService) Name() string { return "echo-service" }
func (s *echoService) Serve(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return nil
	case err := <-s.fail:
		if err == nil {
			err = errors.New("failed")
		}
		return err
	}
}
