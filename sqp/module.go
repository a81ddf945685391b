package sqp

import (
	"context"
	"encoding/hex"

	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/module"
)

// Name is the protocol's name, written once: its config table [sqp], the
// protocol label of its metrics and its `queryd query -proto` value.
const Name = "sqp"

// Module is the Unity SQP protocol module: its [sqp] section, its handler,
// and its client for `queryd query`.
type Module struct{}

// Name returns Name.
func (Module) Name() string { return Name }

// Claims reports whether a datagram is one of the protocol's queries, with
// the protocol on or off (the daemon's Claimer capability: a query never
// wakes a sleeping server, [sleep]).
func (Module) Claims(p []byte) bool { return Claims(p) }

// NewSection returns [sqp] with its defaults (off).
func (Module) NewSection() config.Section { return NewSection() }

// Build makes the handler for [sqp].
func (Module) Build(sec config.Section, env module.Env) (module.Protocol, error) {
	return NewHandler(sec.(*Section).handlerConfig(env.Listen), env.Issuer), nil
}

// Probe is the challenge request: its reply is always a challenge.
func (Module) Probe() module.Probe {
	return module.Probe{
		Request: ChallengeRequest[:],
		Reply: func(p []byte) bool {
			_, ok := challengeReply(p)
			return ok
		},
		Challenge: func([]byte) bool { return true },
	}
}

// Query asks addr for every chunk in one query (after its challenge); each
// request may take opts.Steps (else the context's deadline).
func (Module) Query(ctx context.Context, addr string, opts module.QueryOptions) (module.Answer, error) {
	c, err := Dial(addr)
	if err != nil {
		return module.Answer{}, err
	}
	defer c.Close()
	c.Timeout = module.StepTimeout(ctx, opts)
	resp, err := c.Query(AllChunks)
	if err != nil {
		return module.Answer{}, module.Step(0, "query", err)
	}
	full := map[string]any{
		"server_info": resp.Info,
		"rules":       rulesMap(resp.Rules),
		"players":     rows(resp.Players),
		"teams":       rows(resp.Teams),
	}
	if len(resp.Metrics) > 0 {
		full["metrics"] = hex.EncodeToString(resp.Metrics)
	}
	info := resp.Info
	return module.Answer{
		Summary: module.Summary{Name: info.ServerName, Map: info.Map,
			Players: module.IntPtr(int(info.CurrentPlayers)), MaxPlayers: module.IntPtr(int(info.MaxPlayers))},
		Full: full,
	}, nil
}

// rulesMap returns the rules as a map for JSON (printed in key order).
func rulesMap(rules []Rule) map[string]Value {
	m := make(map[string]Value, len(rules))
	for _, r := range rules {
		m[r.Key] = r.Value
	}
	return m
}

// rows returns a table's rows as field name → value maps for JSON.
func rows(t *Table) []map[string]Value {
	out := make([]map[string]Value, 0, len(t.Rows))
	for _, row := range t.Rows {
		m := make(map[string]Value, len(row))
		for j, f := range t.Fields {
			m[f.Name] = row[j]
		}
		out = append(out, m)
	}
	return out
}

var _ module.Protocol = (*Handler)(nil)
