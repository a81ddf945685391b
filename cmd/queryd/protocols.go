package main

import (
	"log/slog"

	"github.com/queryd/queryd/challenge"
	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/responder"
	"github.com/queryd/queryd/state"
	"github.com/queryd/queryd/wire"
)

// protocol is a responder handler that encodes its replies once per snapshot.
type protocol interface {
	responder.Handler
	Update(*state.Snapshot)
}

// deps is what protocol builders may use besides the config.
type deps struct {
	issuer   *challenge.Issuer
	clock    *wire.Clock // coarse clock set per receive batch: pass clock.Now to handlers
	log      *slog.Logger
	gamePort uint16 // the first [listen] udp port
}

// buildProtocols makes the enabled protocol handlers, in demux order. Each
// builder returns nil when its protocol is disabled.
func buildProtocols(c *config.Config, d deps) ([]protocol, error) {
	builders := []func(*config.Config, deps) (protocol, error){
		buildA2S, buildGameSpy4, buildSAGL, buildQuake3,
	}
	var out []protocol
	for _, b := range builders {
		p, err := b(c, d)
		if err != nil {
			return nil, err
		}
		if p != nil {
			out = append(out, p)
		}
	}
	return out, nil
}

// buildServices makes the parts that run beside the responder (HTTP
// listeners, heartbeats, relay) for the config.
func buildServices(c *config.Config, d *daemon) ([]service, error) {
	var out []service
	for _, b := range []func(*config.Config, *daemon) ([]service, error){
		servicesSAGL, servicesQuake3,
	} {
		s, err := b(c, d)
		if err != nil {
			return nil, err
		}
		out = append(out, s...)
	}
	return out, nil
}
