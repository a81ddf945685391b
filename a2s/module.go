package a2s

import (
	"context"

	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/module"
)

// Name is the protocol's name, written once: its config table [a2s], the
// protocol label of its metrics and its `queryd query -proto` value.
const Name = "a2s"

// Module is the A2S protocol module: its [a2s] section, its handler, and
// its client for `queryd query`.
type Module struct{}

// Name returns Name.
func (Module) Name() string { return Name }

// Claims reports whether a datagram is one of the protocol's queries, with
// the protocol on or off (the daemon's Claimer capability: a query never
// wakes a sleeping server, [sleep]).
func (Module) Claims(p []byte) bool { return Claims(p) }

// NewSection returns [a2s] with its defaults.
func (Module) NewSection() config.Section { return NewSection() }

// Build makes the handler for [a2s].
func (Module) Build(sec config.Section, env module.Env) (module.Protocol, error) {
	s := sec.(*Section)
	port := uint16(s.GamePort)
	if port == 0 {
		port = env.GamePort()
	}
	return NewHandler(Config{
		AppID:          uint16(s.AppID),
		GameID:         s.GameID,
		Protocol:       byte(s.Protocol),
		InfoChallenge:  s.InfoChallenge,
		Compat:         s.Compat,
		LegacyRequests: s.LegacyRequests,
		GamePort:       port,
	}, env.Issuer, env.Now), nil
}

// Probe is A2S_INFO without a challenge: a challenge or the INFO reply.
func (Module) Probe() module.Probe {
	return module.Probe{
		Request: []byte("\xFF\xFF\xFF\xFFTSource Engine Query\x00"),
		Reply: func(p []byte) bool {
			return len(p) >= 5 && string(p[:4]) == "\xFF\xFF\xFF\xFF" && (p[4] == 'A' || p[4] == 'I')
		},
		Challenge: func(p []byte) bool { return p[4] == 'A' },
	}
}

// Query asks addr A2S_INFO, A2S_PLAYER and A2S_RULES; each request may
// take opts.Steps (else the context's deadline).
func (Module) Query(ctx context.Context, addr string, opts module.QueryOptions) (module.Answer, error) {
	c, err := Dial(addr)
	if err != nil {
		return module.Answer{}, err
	}
	defer c.Close()
	c.Timeout = module.StepTimeout(ctx, opts)
	info, err := c.Info()
	if err != nil {
		return module.Answer{}, module.Step(0, "A2S_INFO", err)
	}
	players, err := c.Players()
	if err != nil {
		return module.Answer{}, module.Step(1, "A2S_PLAYER", err)
	}
	rules, err := c.Rules()
	if err != nil {
		return module.Answer{}, module.Step(2, "A2S_RULES", err)
	}
	rm := make(map[string]string, len(rules))
	for _, r := range rules {
		rm[r[0]] = r[1]
	}
	return module.Answer{
		Summary: module.Summary{Name: info.Name, Map: info.Map, Players: module.IntPtr(int(info.Players)), MaxPlayers: module.IntPtr(int(info.MaxPlayers))},
		Full:    map[string]any{"info": info, "players": players, "rules": rm},
	}, nil
}

var _ module.Protocol = (*Handler)(nil)
