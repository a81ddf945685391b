package sqp

import (
	"encoding/binary"

	"github.com/queryd/queryd/state"
)

// plan is the reply to one combination of requested chunks: its chunk
// bytes as pieces in reply order (shared, immutable), their total size,
// the number of datagrams, and how many rules and players it lists.
type plan struct {
	pieces  [7][]byte
	n       int // pieces used
	size    int
	packets int
	rules   int
	players int
}

// encoded is every combination's plan for one snapshot.
type encoded struct {
	plans [AllChunks + 1]plan
}

// playersHead is the size of a PlayerInfo chunk before its records: the
// chunk length, the player count and the field header.
var playersHead = 4 + 2 + len(playerFields)

// encode encodes the chunks of snap once and plans the reply to every
// combination of them. Rules and players are encoded only as far as one
// reply can carry, so the cost is bounded whatever the state holds.
func encode(cfg Config, snap *state.Snapshot) *encoded {
	info := encodeInfo(cfg, snap)
	rules := encodeRules(snap.Rules)
	players := encodePlayers(snap.Players)
	enc := &encoded{}
	// One buffer for every plan's rules and players chunk headers.
	heads := make([]byte, 0, (AllChunks+1)/2*(4+playersHead))
	for c := range enc.plans {
		heads = enc.plans[c].make(byte(c), info, &rules, &players, heads)
	}
	return enc
}

// make plans the reply to chunks, appending its chunk headers to heads
// (which has room for them) and returning it. When the rules and the
// players requested do not fit one reply together, the rules keep at most
// half of the room the other chunks leave (all of it that the players do
// not need), and the players take the rest: both lists are cut short in
// their order, never a record in half.
func (p *plan) make(chunks byte, info []byte, rules, players *records, heads []byte) []byte {
	room := MaxPayload
	for _, c := range []struct {
		bit  byte
		size int
	}{{ChunkServerInfo, len(info)}, {ChunkServerRules, 4}, {ChunkPlayerInfo, playersHead}, {ChunkTeamInfo, len(teamChunk)}, {ChunkMetrics, len(metricsChunk)}} {
		if chunks&c.bit != 0 {
			room -= c.size
		}
	}
	wantRules, wantPlayers := 0, 0
	if chunks&ChunkServerRules != 0 {
		wantRules = rules.lastEnd()
	}
	if chunks&ChunkPlayerInfo != 0 {
		wantPlayers = players.lastEnd()
	}
	ruleBytes, playerBytes := wantRules, wantPlayers
	if chunks&ChunkServerRules != 0 {
		p.rules = len(rules.ends)
	}
	if chunks&ChunkPlayerInfo != 0 {
		p.players = len(players.ends)
	}
	if wantRules+wantPlayers > room {
		if chunks&ChunkServerRules != 0 {
			p.rules, ruleBytes = rules.fit(max(room/2, room-wantPlayers))
		}
		if chunks&ChunkPlayerInfo != 0 {
			p.players, playerBytes = players.fit(room - ruleBytes)
		}
	}
	if chunks&ChunkServerInfo != 0 {
		p.add(info)
	}
	if chunks&ChunkServerRules != 0 {
		start := len(heads)
		heads = binary.BigEndian.AppendUint32(heads, uint32(ruleBytes))
		p.add(heads[start:])
		p.add(rules.b[:ruleBytes])
	}
	if chunks&ChunkPlayerInfo != 0 {
		start := len(heads)
		heads = binary.BigEndian.AppendUint32(heads, uint32(playersHead-4+playerBytes))
		heads = binary.BigEndian.AppendUint16(heads, uint16(p.players))
		heads = append(heads, playerFields...)
		p.add(heads[start:])
		p.add(players.b[:playerBytes])
	}
	if chunks&ChunkTeamInfo != 0 {
		p.add(teamChunk)
	}
	if chunks&ChunkMetrics != 0 {
		p.add(metricsChunk)
	}
	p.packets = max(1, (p.size+MaxBody-1)/MaxBody)
	return heads
}

// add appends a piece of chunk bytes to the plan.
func (p *plan) add(b []byte) {
	p.pieces[p.n] = b
	p.n++
	p.size += len(b)
}

// write writes the plan's datagrams into scratch, each with the reply
// header carrying token, and appends them to out. scratch must hold
// p.packets*HeaderLen + p.size bytes.
func (p *plan) write(token uint32, scratch []byte, out [][]byte) [][]byte {
	last := p.packets - 1
	piece, off, rest := 0, 0, p.size
	for cur := 0; cur <= last; cur++ {
		n := min(rest, MaxBody)
		d := scratch[:HeaderLen+n]
		scratch = scratch[len(d):]
		d[0] = TypeQuery
		binary.BigEndian.PutUint32(d[1:5], token)
		binary.BigEndian.PutUint16(d[5:7], Version)
		d[7], d[8] = byte(cur), byte(last)
		binary.BigEndian.PutUint16(d[9:11], uint16(n))
		for w := HeaderLen; w < len(d); {
			c := copy(d[w:], p.pieces[piece][off:])
			w += c
			off += c
			if off == len(p.pieces[piece]) {
				piece, off = piece+1, 0
			}
		}
		out = append(out, d)
		rest -= n
	}
	return out
}
