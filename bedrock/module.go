package bedrock

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"sync"

	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/dgram"
	"github.com/queryd/queryd/module"
)

// Name is the protocol's name, written once: its config table [bedrock], the
// protocol label of its metrics and its `queryd query -proto` value.
const Name = "bedrock"

// Module is the Minecraft Bedrock status module: its [bedrock] section, its
// handler, and its client for `queryd query`.
type Module struct{}

// Name returns Name.
func (Module) Name() string { return Name }

// Claims reports whether a datagram is one of the protocol's queries, with
// the protocol on or off (the daemon's Claimer capability: a query never
// wakes a sleeping server, [sleep]).
func (Module) Claims(p []byte) bool { return Claims(p) }

// NewSection returns [bedrock] with its defaults.
func (Module) NewSection() config.Section { return NewSection() }

// processGUID is this process's server GUID, made on first use. Build runs
// again on every reload; taking the GUID from here keeps it the same for
// the life of the process, as a Bedrock server's is, while a restart makes
// a new one.
var processGUID = sync.OnceValue(func() uint64 {
	var b [8]byte
	rand.Read(b[:])
	return GUIDFrom(binary.BigEndian.Uint64(b[:]))
})

// Build makes the ping handler for [bedrock].
func (Module) Build(sec config.Section, env module.Env) (module.Protocol, error) {
	s := sec.(*Section)
	return NewHandler(s.handlerConfig(env.Listen, processGUID()), s.PacketRate, s.PacketBurst), nil
}

// probeTime is the time of the probe's ping.
const probeTime = 0x7175657279640001 // "queryd" 00 01

// Probe is the ping itself: Bedrock has no challenge round trip.
func (Module) Probe() module.Probe {
	return module.Probe{
		Request: AppendPing(nil, probeTime, 0),
		Reply: func(p []byte) bool {
			return len(p) >= PongHeaderLen && p[0] == IDPong && binary.BigEndian.Uint64(p[pongTime:]) == probeTime
		},
		Challenge: func([]byte) bool { return false },
	}
}

// Query pings addr once; the ping may take opts.Steps (else the context's
// deadline).
func (Module) Query(ctx context.Context, addr string, opts module.QueryOptions) (module.Answer, error) {
	c, err := Dial(addr)
	if err != nil {
		return module.Answer{}, err
	}
	defer c.Close()
	c.Timeout = module.StepTimeout(ctx, opts)
	p, err := c.Ping()
	if err != nil {
		return module.Answer{}, module.Step(0, "unconnected ping", err)
	}
	s := p.Status
	return module.Answer{
		Summary: module.Summary{Name: s.MOTD, Map: s.SubMOTD, Players: module.IntPtr(s.Players), MaxPlayers: module.IntPtr(s.MaxPlayers)},
		Full:    p,
	}, nil
}

var _ module.Protocol = (*Handler)(nil)

// The responder finds the packet rate by a type assertion on the handler it
// is given: a changed signature would turn the rate off silently.
var _ dgram.PacketLimited = (*Handler)(nil)
