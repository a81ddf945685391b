package gamespy4

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/queryd/queryd/module"
	"github.com/queryd/queryd/state"
)

// Poll asks the game server at server (a stock Minecraft Java server with
// enable-query=true, or any GameSpy4 server) the handshake and the full
// stat from a socket of this poll's own (module.Poller), with a random
// session id (masked with 0x0F0F0F0F, as Minecraft wants): a reply that
// does not carry it is dropped.
func (Module) Poll(ctx context.Context, server netip.AddrPort, opts module.PollOptions) (module.Polled, error) {
	conn, err := module.PollConn(server)
	if err != nil {
		return module.Polled{}, fmt.Errorf("gamespy4: %w", err)
	}
	defer conn.Close()
	defer module.CloseOnDone(ctx, conn)()
	c := &Client{conn: conn, buf: make([]byte, 65536), Timeout: opts.Timeout}
	var sid [4]byte
	rand.Read(sid[:])
	binary.BigEndian.PutUint32(c.Session[:], binary.BigEndian.Uint32(sid[:])&0x0F0F0F0F)
	full, err := c.Full()
	if err != nil {
		return module.Polled{}, module.Step(0, "full stat", err)
	}
	doc := FromFull(full)
	if g, ok := doc["gamespy4"].(map[string]any); ok && opts.OwnAddress {
		delete(g, "hostip") // relay mode: queryd's address is the game's
	}
	return module.Polled{Doc: doc}, nil
}

// pollFields are the full stat keys a state field takes; each is left out
// of the rules when it gave its field. numplayers is the player list's
// business (kept as a rule only when it counts more players than the list
// names, as a reply cut to one datagram does). ownKeys are the vanilla
// keys no common field takes: the "gamespy4" object.
var pollFields = map[string]func(v string) (field string, val any, ok bool){
	"hostname": func(v string) (string, any, bool) { return "name", module.DocText(v, state.MaxNameLen), true },
	"map":      func(v string) (string, any, bool) { return "map", module.DocText(v, state.MaxShortLen), true },
	"version":  func(v string) (string, any, bool) { return "version", module.DocText(v, state.MaxShortLen), true },
	"game_id":  func(v string) (string, any, bool) { return "game", module.DocText(v, state.MaxShortLen), true },
	"maxplayers": func(v string) (string, any, bool) {
		n, ok := module.DocCount(v)
		return "max_players", n, ok
	},
	"hostport": func(v string) (string, any, bool) {
		n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 16)
		return "game_port", module.DocNum(int64(n)), err == nil && n > 0
	},
}

var ownKeys = map[string]bool{"gametype": true, "game_id": true, "plugins": true, "hostip": true}

// FromFull maps a full stat to a state document (the table in doc.go,
// "Polling a stock server"): hostname is the name, map, version, game_id
// the game, maxplayers max_players, hostport game_port; gametype, game_id,
// plugins and hostip are the "gamespy4" object, which the front's replies
// show; every other key is a rule (of a repeated key the first is kept). The players are the player section's names, keyed by place.
// Every value is fitted to the state's limits, so the document is valid
// for any reply this package parses.
func FromFull(f *Full) map[string]any {
	doc := map[string]any{}
	r, own := module.DocRules{}, map[string]any{}
	seen := map[string]bool{}
	for _, kv := range f.Keys {
		k, v := kv[0], kv[1]
		if seen[k] {
			continue
		}
		seen[k] = true
		if ownKeys[k] {
			own[k] = module.DocText(v, state.MaxGameSpy4Text)
		}
		if to, ok := pollFields[k]; ok {
			if field, val, ok := to(v); ok {
				doc[field] = val
				continue
			}
		}
		if ownKeys[k] {
			continue
		}
		if k == "numplayers" {
			if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n == len(f.Players) {
				continue
			}
		}
		r.Add(k, v)
	}
	doc["rules"] = map[string]any(r)
	doc["gamespy4"] = own
	players := make(map[string]any, min(len(f.Players), state.MaxPlayers))
	for i, name := range f.Players[:min(len(f.Players), state.MaxPlayers)] {
		players[strconv.Itoa(i)] = map[string]any{"name": module.DocText(name, state.MaxPlayerName)}
	}
	doc["players"] = players
	return doc
}

var _ module.Poller = Module{}
