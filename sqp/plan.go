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

// chunkData is one snapshot's encoded chunks, from which every plan takes
// its pieces.
type chunkData struct {
	info           []byte // the whole ServerInfo chunk
	rules, players records
	heads          []byte // the plans' rules and players chunk headers
}

// encode encodes the chunks of snap once and plans the reply to every
// combination of them. Rules and players are encoded only as far as one
// reply can carry, so the cost is bounded whatever the state holds.
func encode(cfg Config, snap *state.Snapshot) *encoded {
	d := &chunkData{
		info:    encodeInfo(cfg, snap),
		rules:   encodeRules(snap.Rules),
		players: encodePlayers(snap.Players),
		// Room for every plan's headers: half the plans have rules, half players.
		heads: make([]byte, 0, (AllChunks+1)/2*(4+playersHead)),
	}
	enc := &encoded{}
	for c := range enc.plans {
		enc.plans[c].make(byte(c), d)
	}
	return enc
}

// room returns the bytes the rules and players records of a reply to
// chunks may take: MaxPayload less every other byte of the chunks.
func (d *chunkData) room(chunks byte) int {
	room := MaxPayload
	for _, c := range [...]struct {
		bit  byte
		size int
	}{{ChunkServerInfo, len(d.info)}, {ChunkServerRules, 4}, {ChunkPlayerInfo, playersHead}, {ChunkTeamInfo, len(teamChunk)}, {ChunkMetrics, len(metricsChunk)}} {
		if chunks&c.bit != 0 {
			room -= c.size
		}
	}
	return room
}

// split returns how many rules and players a reply to chunks lists, and
// their bytes. When the two lists asked for do not fit together, the
// rules keep at most half of the room (all of it that the players do not
// need) and the players take the rest: both are cut short in their order,
// never a record in half.
func (d *chunkData) split(chunks byte) (rules, ruleBytes, players, playerBytes int) {
	if chunks&ChunkServerRules != 0 {
		rules, ruleBytes = len(d.rules.ends), d.rules.lastEnd()
	}
	if chunks&ChunkPlayerInfo != 0 {
		players, playerBytes = len(d.players.ends), d.players.lastEnd()
	}
	room := d.room(chunks)
	if ruleBytes+playerBytes <= room {
		return rules, ruleBytes, players, playerBytes
	}
	if chunks&ChunkServerRules != 0 {
		rules, ruleBytes = d.rules.fit(max(room/2, room-playerBytes))
	}
	if chunks&ChunkPlayerInfo != 0 {
		players, playerBytes = d.players.fit(room - ruleBytes)
	}
	return rules, ruleBytes, players, playerBytes
}

// make plans the reply to chunks from d: the chunks in bit order, each
// list behind a header of its own in d.heads.
func (p *plan) make(chunks byte, d *chunkData) {
	var ruleBytes, playerBytes int
	p.rules, ruleBytes, p.players, playerBytes = d.split(chunks)
	if chunks&ChunkServerInfo != 0 {
		p.add(d.info)
	}
	if chunks&ChunkServerRules != 0 {
		start := len(d.heads)
		d.heads = binary.BigEndian.AppendUint32(d.heads, uint32(ruleBytes))
		p.add(d.heads[start:])
		p.add(d.rules.b[:ruleBytes])
	}
	if chunks&ChunkPlayerInfo != 0 {
		start := len(d.heads)
		d.heads = binary.BigEndian.AppendUint32(d.heads, uint32(playersHead-4+playerBytes))
		d.heads = binary.BigEndian.AppendUint16(d.heads, uint16(p.players))
		d.heads = append(d.heads, playerFields...)
		p.add(d.heads[start:])
		p.add(d.players.b[:playerBytes])
	}
	if chunks&ChunkTeamInfo != 0 {
		p.add(teamChunk)
	}
	if chunks&ChunkMetrics != 0 {
		p.add(metricsChunk)
	}
	p.packets = max(1, (p.size+MaxBody-1)/MaxBody)
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
