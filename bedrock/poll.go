package bedrock

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"net/netip"
	"strconv"

	"github.com/queryd/queryd/module"
	"github.com/queryd/queryd/state"
)

// Poll sends the game server at server (a stock Bedrock Dedicated Server)
// one unconnected ping from a socket of this poll's own (module.Poller).
// Its time field is random, not the clock: the pong must echo it, so it
// is this poll's nonce.
func (Module) Poll(ctx context.Context, server netip.AddrPort, opts module.PollOptions) (module.Polled, error) {
	conn, err := module.PollConn(server)
	if err != nil {
		return module.Polled{}, fmt.Errorf("bedrock: %w", err)
	}
	defer conn.Close()
	defer module.CloseOnDone(ctx, conn)()
	var b [16]byte
	rand.Read(b[:])
	c := &Client{conn: conn, buf: make([]byte, 65536), Timeout: opts.Timeout, GUID: binary.BigEndian.Uint64(b[8:])}
	// Ping sends max(now, last+1): a random value above any clock reading.
	c.last = binary.BigEndian.Uint64(b[:8])>>2 | 1<<61
	pong, err := c.Ping()
	if err != nil {
		return module.Polled{}, module.Step(0, "unconnected ping", err)
	}
	doc := FromPong(pong)
	if opts.OwnAddress { // relay mode: queryd's ports are the game's
		delete(doc["bedrock"].(map[string]any), "ipv6_port")
	}
	return module.Polled{Doc: doc}, nil
}

// FromPong maps an unconnected pong to a state document (the table in
// doc.go, "Polling a stock server"): the motd is the name, the sub-motd the
// map, version, max, the game mode the gamemode, the protocol number the
// protocol, the IPv4 port game_port; the pong counts its players without
// naming them, so the document lists that many players with empty names
// (every protocol counts them; GameSpy4 lists no empty name). The edition,
// protocol, server id, game mode number and IPv6 port are the "bedrock"
// object, which the front's pong shows; a value no field can hold (a count
// or port out of range, a server id that is not a 64-bit number) is kept
// in its "other". The pong has no rules, so the document has none. Every
// value is fitted to the state's limits, so the document is valid for any
// pong this package parses.
func FromPong(p *Pong) map[string]any {
	st := p.Status
	doc := map[string]any{
		"name":     module.DocText(st.MOTD, state.MaxNameLen),
		"map":      module.DocText(st.SubMOTD, state.MaxShortLen),
		"version":  module.DocText(st.Version, state.MaxShortLen),
		"gamemode": module.DocText(st.GameMode, state.MaxShortLen),
		"rules":    map[string]any{},
	}
	own, other := map[string]any{}, module.DocRules{}
	if n, ok := module.DocCount(strconv.Itoa(st.MaxPlayers)); ok {
		doc["max_players"] = n
	} else {
		other.Add("max_players", strconv.Itoa(st.MaxPlayers))
	}
	module.DocSet(doc, "protocol", module.DocNum(int64(st.Protocol))) // SAGL's, when in its range
	if st.Protocol >= 0 && st.Protocol <= state.MaxBedrockProtocol {
		own["protocol"] = module.DocNum(int64(st.Protocol))
	} else {
		other.Add("protocol", strconv.Itoa(st.Protocol))
	}
	if st.IPv4Port > 0 && st.IPv4Port <= 65535 {
		doc["game_port"] = module.DocNum(int64(st.IPv4Port))
	} else if st.IPv4Port != 0 {
		other.Add("ipv4_port", strconv.Itoa(st.IPv4Port))
	}
	if e := module.DocText(st.Edition, 16); e != "" && e == st.Edition {
		own["edition"] = e
	} else if st.Edition != "" {
		other.Add("edition", st.Edition)
	}
	if id, err := strconv.ParseUint(st.ServerID, 10, 64); err == nil && id != 0 {
		own["server_id"] = strconv.FormatUint(id, 10)
		if id != p.ServerGUID {
			other.Add("header_guid", strconv.FormatUint(p.ServerGUID, 10))
		}
	} else if st.ServerID != "" {
		other.Add("server_id", st.ServerID)
	}
	if st.GameModeNumber >= 0 && st.GameModeNumber <= state.MaxGameModeNumber {
		own["game_mode_number"] = module.DocNum(int64(st.GameModeNumber))
	} else {
		other.Add("game_mode_number", strconv.Itoa(st.GameModeNumber))
	}
	if st.IPv6Port >= 0 && st.IPv6Port <= 65535 {
		own["ipv6_port"] = module.DocNum(int64(st.IPv6Port))
	} else {
		other.Add("ipv6_port", strconv.Itoa(st.IPv6Port))
	}
	n := min(max(st.Players, 0), state.MaxPlayers)
	players := make(map[string]any, n)
	for i := range n {
		players[strconv.Itoa(i)] = map[string]any{"name": ""}
	}
	doc["players"] = players
	if st.Players > state.MaxPlayers || st.Players < 0 {
		other.Add("players", strconv.Itoa(st.Players))
	}
	if len(other) > 0 {
		own["other"] = map[string]any(other)
	}
	doc["bedrock"] = own
	return doc
}

var _ module.Poller = Module{}
