package gamespy4

import (
	"context"

	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/module"
)

// Name is the protocol's name, written once: its config table [gamespy4], the
// protocol label of its metrics and its `queryd query -proto` value.
const Name = "gamespy4"

// Module is the GameSpy4 / Minecraft Query protocol module: its [gamespy4]
// section, its handler, and its client for `queryd query`.
type Module struct{}

// Name returns Name.
func (Module) Name() string { return Name }

// Claims reports whether a datagram is one of the protocol's queries, with
// the protocol on or off (the daemon's Claimer capability: a query never
// wakes a sleeping server, [sleep]).
func (Module) Claims(p []byte) bool { return Claims(p) }

// NewSection returns [gamespy4] with its defaults.
func (Module) NewSection() config.Section { return NewSection() }

// Build makes the handler for [gamespy4].
func (Module) Build(sec config.Section, env module.Env) (module.Protocol, error) {
	return NewHandler(sec.(*Section).handlerConfig(env.Listen), env.Issuer), nil
}

// probeSession is the session id of the probe's handshake.
var probeSession = [4]byte{0x01, 0x02, 0x03, 0x04}

// Probe is the handshake: its reply is always a token (a challenge).
func (Module) Probe() module.Probe {
	return module.Probe{
		Request: append([]byte{0xFE, 0xFD, 0x09}, probeSession[:]...),
		Reply: func(p []byte) bool {
			return len(p) >= 5 && p[0] == 0x09 && [4]byte(p[1:5]) == probeSession
		},
		Challenge: func([]byte) bool { return true },
	}
}

// Query asks addr the basic and the full stat; each request may take
// opts.Steps (else the context's deadline).
func (Module) Query(ctx context.Context, addr string, opts module.QueryOptions) (module.Answer, error) {
	c, err := Dial(addr)
	if err != nil {
		return module.Answer{}, err
	}
	defer c.Close()
	c.Timeout = module.StepTimeout(ctx, opts)
	basic, err := c.Basic()
	if err != nil {
		return module.Answer{}, module.Step(0, "basic stat", err)
	}
	full, err := c.Full()
	if err != nil {
		return module.Answer{}, module.Step(1, "full stat", err)
	}
	keys := make(map[string]string, len(full.Keys))
	for _, kv := range full.Keys {
		keys[kv[0]] = kv[1]
	}
	return module.Answer{
		Summary: module.Summary{Name: basic.MOTD, Map: basic.Map, Players: module.Count(basic.NumPlayers), MaxPlayers: module.Count(basic.MaxPlayers)},
		Full:    map[string]any{"basic": basic, "full": keys, "players": full.Players},
	}, nil
}

var _ module.Protocol = (*Handler)(nil)
