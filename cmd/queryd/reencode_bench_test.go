package main

import (
	"io"
	"log/slog"
	"strconv"
	"testing"

	"github.com/queryd/queryd/challenge"
	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/dgram"
	"github.com/queryd/queryd/module"
	"github.com/queryd/queryd/state"
)

// BenchmarkFeedChange1000 measures one accepted feed change (a patch) on a
// state of 1,000 players, end to end: merging and validating the document,
// making the snapshot and re-encoding every protocol of the demo config.
func BenchmarkFeedChange1000(b *testing.B) {
	store, _ := feedBench(b)
	patch, _ := state.Normalize(map[string]any{"players": map[string]any{"7": map[string]any{"score": 99}}})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := store.Patch(patch); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReencode1000 measures re-encoding every protocol of the
// registration list for a new snapshot of 1,000 players: the work a state
// change costs the responders. The bound is 1 ms.
func BenchmarkReencode1000(b *testing.B) {
	store, protos := feedBench(b)
	snap := store.Snapshot()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, p := range protos {
			p.Update(snap)
		}
	}
}

// feedBench makes a store of 1,000 players with every protocol of the demo
// config subscribed to it.
func feedBench(b *testing.B) (*state.Store, []module.Protocol) {
	cfg, err := config.Parse(config.Default, configModules()...)
	if err != nil {
		b.Fatal(err)
	}
	env := module.Env{
		Issuer: challenge.NewWithKey([16]byte{1}, nil), Now: (&dgram.Clock{}).Now,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Listen: cfg.Listen.UDP, Base: cfg.ServerDoc,
	}
	var protos []module.Protocol
	for _, m := range modules {
		if sec := cfg.Section(m.Name()); sec.On() {
			p, err := m.Build(sec, env)
			if err != nil {
				b.Fatalf("%s: %v", m.Name(), err)
			}
			protos = append(protos, p)
		}
	}
	if len(protos) != len(modules) {
		b.Fatalf("the demo config enables %d of the %d protocols", len(protos), len(modules))
	}
	store, err := state.NewStore(cfg.ServerDoc, nil)
	if err != nil {
		b.Fatal(err)
	}
	store.Subscribe(func(s *state.Snapshot) {
		for _, p := range protos {
			p.Update(s)
		}
	})
	players := map[string]any{}
	for i := 0; i < 1000; i++ {
		players[strconv.Itoa(i)] = map[string]any{"name": "player " + strconv.Itoa(i), "score": i, "ping": 30}
	}
	doc, err := state.Normalize(map[string]any{"name": "bench", "map": "m", "max_players": 1000, "players": players})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := store.Replace(doc); err != nil {
		b.Fatal(err)
	}
	return store, protos
}
