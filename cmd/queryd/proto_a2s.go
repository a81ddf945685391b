package main

import (
	"fmt"

	"github.com/queryd/queryd/a2s"
	"github.com/queryd/queryd/config"
)

func buildA2S(c *config.Config, d deps) (protocol, error) {
	if !c.A2S.Enabled {
		return nil, nil
	}
	port := uint16(c.A2S.GamePort)
	if port == 0 {
		port = d.gamePort
	}
	return a2s.NewHandler(a2s.Config{
		AppID:          uint16(c.A2S.AppID),
		GameID:         c.A2S.GameID,
		Protocol:       byte(c.A2S.Protocol),
		InfoChallenge:  c.A2S.InfoChallenge,
		Compat:         c.A2S.Compat,
		LegacyRequests: c.A2S.LegacyRequests,
		GamePort:       port,
	}, d.issuer, d.clock.Now), nil
}

// queryA2S asks a server A2S_INFO, A2S_PLAYER and A2S_RULES.
func queryA2S(addr string, q queryOpts) (any, error) {
	c, err := a2s.Dial(addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	c.Timeout = q.timeout
	info, err := c.Info()
	if err != nil {
		return nil, fmt.Errorf("A2S_INFO: %w", err)
	}
	players, err := c.Players()
	if err != nil {
		return nil, fmt.Errorf("A2S_PLAYER: %w", err)
	}
	rules, err := c.Rules()
	if err != nil {
		return nil, fmt.Errorf("A2S_RULES: %w", err)
	}
	rm := make(map[string]string, len(rules))
	for _, r := range rules {
		rm[r[0]] = r[1]
	}
	return map[string]any{"info": info, "players": players, "rules": rm}, nil
}
