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

// Rules that carry the pong's fields the state document has no place for.
const (
	RuleEdition        = "bedrock_edition"          // "MCPE"
	RuleServerID       = "bedrock_server_id"        // the status string's server id (the GUID)
	RuleGameModeNumber = "bedrock_game_mode_number" // "1"
	RuleIPv6Port       = "bedrock_ipv6_port"        // "19133"
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
	return module.Polled{Doc: FromPong(pong)}, nil
}

// FromPong maps an unconnected pong to a state document (the table in
// doc.go, "Polling a stock server"): the motd is the name, the sub-motd the
// map, version, max, the game mode the gamemode, the protocol number the
// protocol, the IPv4 port game_port; the pong counts its players without
// naming them, so the document lists that many players with empty names
// (every protocol counts them; GameSpy4 lists no empty name). The edition,
// server id, game mode number and IPv6 port are rules. Every value is
// fitted to the state's limits, so the document is valid for any pong this
// package parses.
func FromPong(p *Pong) map[string]any {
	st := p.Status
	doc := map[string]any{
		"name":     module.DocText(st.MOTD, state.MaxNameLen),
		"map":      module.DocText(st.SubMOTD, state.MaxShortLen),
		"version":  module.DocText(st.Version, state.MaxShortLen),
		"gamemode": module.DocText(st.GameMode, state.MaxShortLen),
	}
	r := module.DocRules{}
	if n, ok := module.DocCount(strconv.Itoa(st.MaxPlayers)); ok {
		doc["max_players"] = n
	} else {
		r.Add("bedrock_max_players", strconv.Itoa(st.MaxPlayers))
	}
	if !module.DocSet(doc, "protocol", module.DocNum(int64(st.Protocol))) { // outside the state's range
		r.Add("bedrock_protocol", strconv.Itoa(st.Protocol))
	}
	if st.IPv4Port > 0 && st.IPv4Port <= 65535 {
		doc["game_port"] = module.DocNum(int64(st.IPv4Port))
	} else if st.IPv4Port != 0 {
		r.Add("bedrock_ipv4_port", strconv.Itoa(st.IPv4Port))
	}
	r.Add(RuleEdition, st.Edition)
	r.Add(RuleServerID, st.ServerID)
	r.Add(RuleGameModeNumber, strconv.Itoa(st.GameModeNumber))
	if st.IPv6Port != 0 {
		r.Add(RuleIPv6Port, strconv.Itoa(st.IPv6Port))
	}
	doc["rules"] = map[string]any(r)
	n := min(max(st.Players, 0), state.MaxPlayers)
	players := make(map[string]any, n)
	for i := range n {
		players[strconv.Itoa(i)] = map[string]any{"name": ""}
	}
	doc["players"] = players
	if st.Players > state.MaxPlayers || st.Players < 0 {
		r.Add("bedrock_players", strconv.Itoa(st.Players))
	}
	return doc
}

var _ module.Poller = Module{}
