package sqp

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/queryd/queryd/challenge"
	"github.com/queryd/queryd/dgram"
)

// A challenge request gets exactly 5 bytes back: the token, never larger
// than the request, bound to the address.
func TestAnswerChallenge(t *testing.T) {
	h, _ := newTestHandler(t, upstreamConfig, upstreamSnapshot())
	tokens := map[uint32]bool{}
	for _, src := range []netip.AddrPort{clientA, clientB} {
		out, oc := serve(h, ChallengeRequest[:], src)
		if oc != dgram.Challenged || len(out) != 1 || len(out[0]) != ChallengeLen || out[0][0] != TypeChallenge {
			t.Fatalf("%v % x", oc, out)
		}
		tok := binary.BigEndian.Uint32(out[0][1:])
		if tok == 0 || tok != h.issuer.Token(src.Addr()) || tokens[tok] {
			t.Fatalf("%s: token %#x", src, tok)
		}
		tokens[tok] = true
	}
}

// A query is answered with the current or the previous epoch's token of
// its source address; any other token (0, another address's, an expired
// one) gets nothing and counts as ignored.
func TestAnswerQueryTokens(t *testing.T) {
	h, clk := newTestHandler(t, upstreamConfig, upstreamSnapshot())
	ask := func(tok uint32, src netip.AddrPort) dgram.Outcome {
		out, oc := serve(h, AppendQuery(nil, tok, ChunkServerInfo), src)
		if (oc == dgram.Answered) != (len(out) == 1) {
			t.Fatalf("outcome %v with %d datagrams", oc, len(out))
		}
		if oc == dgram.Answered && binary.BigEndian.Uint32(out[0][1:5]) != tok {
			t.Fatalf("reply token % x, want %#x", out[0][1:5], tok)
		}
		return oc
	}
	tok := h.issuer.Token(clientA.Addr())
	if oc := ask(tok, clientA); oc != dgram.Answered {
		t.Fatalf("current token: %v", oc)
	}
	if oc := ask(tok, netip.AddrPortFrom(clientA.Addr(), 9)); oc != dgram.Answered {
		t.Fatalf("same IP, other port: %v", oc) // tokens are bound to the IP
	}
	for name, bad := range map[string]uint32{"zero": 0, "other address": h.issuer.Token(clientB.Addr()), "off by one": tok + 1} {
		if oc := ask(bad, clientA); oc != dgram.Ignored {
			t.Errorf("%s token: %v, want ignored", name, oc)
		}
	}
	clk.t = clk.t.Add(challenge.Epoch)
	if oc := ask(tok, clientA); oc != dgram.Answered {
		t.Fatalf("previous epoch's token: %v", oc)
	}
	clk.t = clk.t.Add(challenge.Epoch)
	if oc := ask(tok, clientA); oc != dgram.Ignored {
		t.Fatalf("expired token: %v", oc)
	}
}

// Unknown chunk bits are malformed; no snapshot yet means no answer.
func TestAnswerMalformedAndEmpty(t *testing.T) {
	h, _ := newTestHandler(t, upstreamConfig, nil)
	if out, oc := serve(h, ChallengeRequest[:], clientA); oc != dgram.Ignored || len(out) != 0 {
		t.Fatalf("before the first snapshot: %v % x", oc, out)
	}
	h.Update(upstreamSnapshot())
	tok := h.issuer.Token(clientA.Addr())
	for _, chunks := range []byte{0x20, 0x40, 0x80, 0xFF} {
		if out, oc := serve(h, AppendQuery(nil, tok, chunks), clientA); oc != dgram.Malformed || len(out) != 0 {
			t.Errorf("chunks %#02x: %v % x", chunks, oc, out)
		}
	}
	for _, req := range [][]byte{{0, 0, 0, 0, 1}, {1, 2, 3}, AppendQuery(nil, tok, 1)[:7]} {
		if out, oc := serve(h, req, clientA); oc != dgram.Malformed || len(out) != 0 {
			t.Errorf("% x: %v % x", req, oc, out)
		}
	}
	// No chunks: the header alone, payload length 0.
	out, oc := serve(h, AppendQuery(nil, tok, 0), clientA)
	if oc != dgram.Answered || len(out) != 1 || len(out[0]) != HeaderLen || out[0][8] != 0 || out[0][10] != 0 {
		t.Fatalf("no chunks: %v % x", oc, out)
	}
}

// A new snapshot changes the replies; an old reply already handed out
// stays as it was (the handler never writes into shared bytes).
func TestAnswerUpdate(t *testing.T) {
	h, _ := newTestHandler(t, upstreamConfig, upstreamSnapshot())
	resp, _ := query(t, h, ChunkServerInfo|ChunkPlayerInfo)
	if resp.Info.ServerName != "my server" || len(resp.Players.Rows) != 5 {
		t.Fatalf("%+v", resp)
	}
	s := richSnapshot()
	h.Update(s)
	resp, _ = query(t, h, ChunkServerInfo|ChunkPlayerInfo)
	if resp.Info.ServerName != s.Name || len(resp.Players.Rows) != len(s.Players) {
		t.Fatalf("after update: %+v", resp)
	}
}

// Serving allocates nothing: challenges, one-packet and multi-packet
// replies.
func TestAnswerAllocs(t *testing.T) {
	h, _ := newTestHandler(t, Config{}, manyPlayers(255, 100))
	tok := h.issuer.Token(clientA.Addr())
	scratch := make([]byte, MaxReply)
	out := make([][]byte, 0, 64)
	for _, req := range [][]byte{ChallengeRequest[:], AppendQuery(nil, tok, ChunkServerInfo), AppendQuery(nil, tok, AllChunks)} {
		if n := testing.AllocsPerRun(100, func() { out, _ = h.Answer(req, clientA, scratch, out[:0]) }); n != 0 {
			t.Errorf("% x: %.1f allocations per Answer", req, n)
		}
	}
}

// The largest state queryd accepts (4,096 players with 64-character names,
// 1,024 rules with long values) still answers every combination within
// MaxPackets datagrams of at most MaxPacket bytes, listing what fits:
// lists asked alone take the whole reply, asked together they share it.
func TestLargestState(t *testing.T) {
	snap := manyPlayers(4096, 1024)
	for i := range snap.Players {
		snap.Players[i].Name = strings64(i)
	}
	start := time.Now()
	h, _ := newTestHandler(t, Config{}, snap)
	t.Logf("Update with 4,096 players and 1,024 rules: %v", time.Since(start))
	for c := 0; c <= AllChunks; c++ {
		chunks := byte(c)
		resp, out := query(t, h, chunks)
		size := 0
		for _, d := range out {
			size += len(d)
			if len(d) > MaxPacket {
				t.Fatalf("chunks %#02x: a datagram of %d bytes", chunks, len(d))
			}
		}
		if len(out) > MaxPackets || size > MaxReply {
			t.Fatalf("chunks %#02x: %d datagrams, %d bytes", chunks, len(out), size)
		}
		if resp.Info != nil && resp.Info.CurrentPlayers != 4096 {
			t.Errorf("chunks %#02x: current players %d", chunks, resp.Info.CurrentPlayers)
		}
		rules, players := h.Listed(chunks)
		if resp.Rules != nil {
			checkRules(t, resp.Rules, snap.Rules[:rules])
		}
		if resp.Players != nil {
			checkPlayers(t, resp.Players, snap.Players[:players])
			if len(resp.Players.Rows) != players {
				t.Fatalf("chunks %#02x: %d rows, Listed says %d", chunks, len(resp.Players.Rows), players)
			}
		}
		// Full: one more record of either list would not have fit.
		if chunks&(ChunkServerRules|ChunkPlayerInfo) != 0 && size < MaxReply-MaxPacket/2 {
			t.Errorf("chunks %#02x: %d bytes; the lists should fill the reply", chunks, size)
		}
		both := chunks&ChunkServerRules != 0 && chunks&ChunkPlayerInfo != 0
		if both && (rules == 0 || players == 0) {
			t.Errorf("chunks %#02x: %d rules and %d players listed together", chunks, rules, players)
		}
	}
	rulesAlone, _ := h.Listed(ChunkServerRules)
	_, playersAlone := h.Listed(ChunkPlayerInfo)
	rulesBoth, playersBoth := h.Listed(ChunkServerRules | ChunkPlayerInfo)
	t.Logf("listed: rules alone %d, players alone %d; together %d rules and %d players", rulesAlone, playersAlone, rulesBoth, playersBoth)
	if rulesBoth >= rulesAlone || playersBoth >= playersAlone || rulesBoth < rulesAlone/2-1 || playersBoth < playersAlone/2-1 {
		t.Errorf("together %d rules and %d players; alone %d and %d: want about half each", rulesBoth, playersBoth, rulesAlone, playersAlone)
	}
}

// When the players need less than half the room, the rules take the rest.
func TestListsShareRoom(t *testing.T) {
	h, _ := newTestHandler(t, Config{}, manyPlayers(20, 1024))
	rulesAlone, _ := h.Listed(ChunkServerRules)
	rules, players := h.Listed(ChunkServerRules | ChunkPlayerInfo)
	if players != 20 || rules < rulesAlone-8 || rules >= rulesAlone {
		t.Fatalf("%d rules (alone %d) and %d players", rules, rulesAlone, players)
	}
	h.Update(manyPlayers(4096, 10))
	_, playersAlone := h.Listed(ChunkPlayerInfo)
	rules, players = h.Listed(ChunkServerRules | ChunkPlayerInfo)
	if rules != 10 || players < playersAlone-40 || players >= playersAlone {
		t.Fatalf("%d rules and %d players (alone %d)", rules, players, playersAlone)
	}
	// doc.go: with 16-byte names, 1,396 players asked alone.
	snap := manyPlayers(4096, 0)
	for i := range snap.Players {
		snap.Players[i].Name = fmt.Sprintf("Player %09d", i)
	}
	h.Update(snap)
	if _, players := h.Listed(ChunkPlayerInfo); players != 1396 {
		t.Fatalf("%d players with 16-byte names, doc.go says 1,396", players)
	}
}

// strings64 returns a 64-character name with non-ASCII letters.
func strings64(i int) string {
	b := []rune("Ünïcödé-Player-")
	for len(b) < 60 {
		b = append(b, 'x')
	}
	return string(b) + string(rune('0'+i%10)) + "日本語"
}
