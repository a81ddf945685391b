package main

import (
	"fmt"
	"net/netip"

	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/gamespy4"
)

func buildGameSpy4(c *config.Config, d deps) (protocol, error) {
	if !c.GameSpy4.Enabled {
		return nil, nil
	}
	return gamespy4.NewHandler(gameSpy4Config(c, d.gamePort), d.issuer), nil
}

// gameSpy4Config turns [gamespy4] into the handler's config: hostport falls
// back to the first [listen] udp port, hostip to that address's IP.
func gameSpy4Config(c *config.Config, gamePort uint16) gamespy4.Config {
	g := c.GameSpy4
	port := uint16(g.HostPort)
	if port == 0 {
		port = gamePort
	}
	ip := g.HostIP
	if ip == "" && len(c.Listen.UDP) > 0 {
		if ap, err := netip.ParseAddrPort(c.Listen.UDP[0]); err == nil {
			ip = ap.Addr().Unmap().String()
		}
	}
	return gamespy4.Config{
		GameType:  g.GameType,
		GameID:    g.GameID,
		Plugins:   g.Plugins,
		HostPort:  port,
		HostIP:    ip,
		MaxPacket: g.MaxPacket,
	}
}

// queryGameSpy4 asks a server the basic and the full stat.
func queryGameSpy4(addr string, q queryOpts) (any, error) {
	c, err := gamespy4.Dial(addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	c.Timeout = q.timeout
	basic, err := c.Basic()
	if err != nil {
		return nil, fmt.Errorf("basic stat: %w", err)
	}
	full, err := c.Full()
	if err != nil {
		return nil, fmt.Errorf("full stat: %w", err)
	}
	keys := make(map[string]string, len(full.Keys))
	for _, kv := range full.Keys {
		keys[kv[0]] = kv[1]
	}
	return map[string]any{"basic": basic, "full": keys, "players": full.Players}, nil
}
