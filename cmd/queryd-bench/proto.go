package main

import (
	"encoding/binary"
	"fmt"
	"sort"
	"strings"

	"github.com/queryd/queryd/a2s"
	"github.com/queryd/queryd/gamespy4"
	"github.com/queryd/queryd/sagl"
)

// replyKind is what one reply datagram means to the load generator.
type replyKind uint8

const (
	replyComplete  replyKind = iota // the last (or only) datagram of an answer
	replyFragment                   // a datagram of a multi-datagram answer, not the last
	replyChallenge                  // a challenge carrying a token
)

// proto is one query the load generator sends: the token-bearing request, the
// request that asks for a token, and how to read the replies.
type proto struct {
	name string
	// challenged: the protocol has a challenge round (Quake 3 has none).
	challenged bool
	// request appends the token-bearing request to b.
	request func(b []byte, tok uint32, session [4]byte) []byte
	// ask appends the request that makes the server answer with a token.
	ask func(b []byte, session [4]byte) []byte
	// classify reads one reply datagram; tok is set for replyChallenge.
	classify func(p []byte, session [4]byte) (replyKind, uint32)
}

// protos are the queries the load generator knows, by -proto name.
var protos = map[string]*proto{
	"a2s_info":   {name: "a2s_info", challenged: true, request: a2sInfoRequest, ask: a2sInfoAsk, classify: a2sClassify},
	"a2s_player": {name: "a2s_player", challenged: true, request: a2sPlayerRequest, ask: a2sPlayerAsk, classify: a2sClassify},
	"gs4_full":   {name: "gs4_full", challenged: true, request: gs4FullRequest, ask: gs4Handshake, classify: gs4Classify},
	"q3_status":  {name: "q3_status", request: q3StatusRequest, ask: q3StatusAsk, classify: q3Classify},
	"sagl_info":  {name: "sagl_info", challenged: true, request: saglInfoRequest, ask: saglInfoAsk, classify: saglClassify},
}

// protoNames lists the -proto values in order.
func protoNames() string {
	names := make([]string, 0, len(protos))
	for n := range protos {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// lookupProto returns the query named name.
func lookupProto(name string) (*proto, error) {
	p, ok := protos[name]
	if !ok {
		return nil, fmt.Errorf("unknown -proto %q: want one of %s", name, protoNames())
	}
	return p, nil
}

// classify reads a reply datagram: the fixed-reply servers' framing (see
// fixedMagic) first, then the protocol's.
func classify(p *proto, d []byte, session [4]byte) (replyKind, uint32) {
	if len(d) >= fixedHeader && string(d[:len(fixedMagic)]) == fixedMagic {
		if d[len(fixedMagic)] > 0 {
			return replyFragment, 0
		}
		return replyComplete, 0
	}
	return p.classify(d, session)
}

var a2sHeader = []byte{0xFF, 0xFF, 0xFF, 0xFF}

// a2sInfoAsk is A2S_INFO without a challenge field (25 bytes): a server that
// wants a challenge answers with one.
func a2sInfoAsk(b []byte, _ [4]byte) []byte {
	b = append(b, a2sHeader...)
	b = append(b, a2s.TypeInfo)
	return append(b, "Source Engine Query\x00"...)
}

// a2sInfoRequest is A2S_INFO with the token (29 bytes).
func a2sInfoRequest(b []byte, tok uint32, s [4]byte) []byte {
	return binary.LittleEndian.AppendUint32(a2sInfoAsk(b, s), tok)
}

// a2sPlayerAsk is A2S_PLAYER with the challenge -1.
func a2sPlayerAsk(b []byte, s [4]byte) []byte { return a2sPlayerRequest(b, a2s.NoChallenge, s) }

// a2sPlayerRequest is A2S_PLAYER with the token (9 bytes).
func a2sPlayerRequest(b []byte, tok uint32, _ [4]byte) []byte {
	b = append(b, a2sHeader...)
	b = append(b, a2s.TypePlayer)
	return binary.LittleEndian.AppendUint32(b, tok)
}

// a2sClassify reads S2C_CHALLENGE (FF FF FF FF 41 <token>) and Source split
// fragments (FE FF FF FF, id, total, number): the fragment numbered total-1
// completes the answer (loopback keeps the order).
func a2sClassify(p []byte, _ [4]byte) (replyKind, uint32) {
	if len(p) == 9 && [4]byte(p[:4]) == [4]byte(a2sHeader) && p[4] == a2s.TypeChallenge {
		return replyChallenge, binary.LittleEndian.Uint32(p[5:])
	}
	if len(p) >= 12 && binary.LittleEndian.Uint32(p) == 0xFFFFFFFE {
		total, num := int(p[8]), int(p[9])
		if num+1 < total {
			return replyFragment, 0
		}
	}
	return replyComplete, 0
}

// gs4Handshake is the GameSpy4 handshake FE FD 09 <session>.
func gs4Handshake(b []byte, s [4]byte) []byte {
	b = append(b, gamespy4.Magic[0], gamespy4.Magic[1], gamespy4.TypeHandshake)
	return append(b, s[:]...)
}

// gs4FullRequest is the 15-byte full stat FE FD 00 <session> <token> FF FF FF 01.
func gs4FullRequest(b []byte, tok uint32, s [4]byte) []byte {
	b = append(b, gamespy4.Magic[0], gamespy4.Magic[1], gamespy4.TypeStat)
	b = append(b, s[:]...)
	b = binary.BigEndian.AppendUint32(b, tok)
	return append(b, 0xFF, 0xFF, 0xFF, 0x01)
}

// gs4Classify reads the handshake reply 09 <session> <token as ASCII
// decimal> 00 (without gamespy4.ParseHandshake, which allocates its errors).
func gs4Classify(p []byte, s [4]byte) (replyKind, uint32) {
	if len(p) < 7 || p[0] != gamespy4.TypeHandshake || [4]byte(p[1:5]) != s || p[len(p)-1] != 0 {
		return replyComplete, 0
	}
	var tok uint64
	for _, c := range p[5 : len(p)-1] {
		if c < '0' || c > '9' || tok > 1<<32 {
			return replyComplete, 0
		}
		tok = tok*10 + uint64(c-'0')
	}
	if tok > 1<<32-1 {
		return replyComplete, 0
	}
	return replyChallenge, uint32(tok)
}

// q3StatusRequest is "getstatus\n" as qstat sends it (Quake 3 has no challenge).
func q3StatusRequest(b []byte, _ uint32, _ [4]byte) []byte {
	b = append(b, a2sHeader...)
	return append(b, "getstatus\n"...)
}

func q3StatusAsk(b []byte, s [4]byte) []byte { return q3StatusRequest(b, 0, s) }

func q3Classify([]byte, [4]byte) (replyKind, uint32) { return replyComplete, 0 }

// saglInfoAsk is the 64-byte info request with token 0.
func saglInfoAsk(b []byte, s [4]byte) []byte { return saglInfoRequest(b, 0, s) }

// saglInfoRequest is the 64-byte info request with the token.
func saglInfoRequest(b []byte, tok uint32, _ [4]byte) []byte {
	return sagl.AppendRequest(b, sagl.Request{Kind: sagl.KindInfo, Token: tok})
}

// saglClassify reads the 12-byte challenge and the info parts (part
// parts-1 completes the answer).
func saglClassify(p []byte, _ [4]byte) (replyKind, uint32) {
	if len(p) < 8 || string(p[:4]) != "SAGR" || p[4] != sagl.Version {
		return replyComplete, 0
	}
	switch {
	case p[5] == sagl.KindChallenge && len(p) == sagl.ChallengeSize:
		return replyChallenge, binary.LittleEndian.Uint32(p[8:])
	case p[5] == sagl.KindInfo && len(p) >= sagl.InfoHeader:
		part, parts := binary.LittleEndian.Uint16(p[16:]), binary.LittleEndian.Uint16(p[18:])
		if int(part)+1 < int(parts) {
			return replyFragment, 0
		}
	}
	return replyComplete, 0
}
