package hostile

import (
	"encoding/binary"

	"github.com/queryd/queryd/bedrock"
	"github.com/queryd/queryd/sagl"
)

// Request is one request datagram an attacker can send without ever
// completing a challenge.
type Request struct {
	Protocol string // metrics label: a2s, gamespy4, sagl, quake3, bedrock, sqp
	Name     string
	Bytes    []byte
}

// a2sReq builds an A2S datagram: the -1 header, typ, then body.
func a2sReq(typ byte, body ...[]byte) []byte {
	b := []byte{0xFF, 0xFF, 0xFF, 0xFF, typ}
	for _, p := range body {
		b = append(b, p...)
	}
	return b
}

func le32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }

func be32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }

// bogusToken is a token no source ever proved (a real one may collide with
// it once in 2^32; the tests would then see one more answer).
const bogusToken = 0x5A5A1234

// unprovenRequests is every request type of every protocol, as sent by a
// source that never completes a challenge (no token, -1, or a made-up one).
func unprovenRequests() []Request {
	engine := []byte("Source Engine Query\x00")
	saglReq := func(kind byte, token, offset uint32) []byte {
		return sagl.AppendRequest(nil, sagl.Request{Kind: kind, Token: token, Offset: offset})
	}
	return []Request{
		{"a2s", "INFO", a2sReq('T', engine)},
		{"a2s", "INFO -1", a2sReq('T', engine, le32(0xFFFFFFFF))},
		{"a2s", "INFO bogus token", a2sReq('T', engine, le32(bogusToken))},
		{"a2s", "INFO compat SOURCE", a2sReq('T', []byte("SOURCE\x00"))},
		{"a2s", "PLAYER -1", a2sReq('U', le32(0xFFFFFFFF))},
		{"a2s", "PLAYER bogus token", a2sReq('U', le32(bogusToken))},
		{"a2s", "RULES -1", a2sReq('V', le32(0xFFFFFFFF))},
		{"a2s", "RULES bogus token", a2sReq('V', le32(bogusToken))},
		{"a2s", "compat retry A bogus token", a2sReq('A', le32(bogusToken))},
		{"a2s", "GETCHALLENGE", a2sReq('W')},
		{"a2s", "GETCHALLENGE padded", a2sReq('W', le32(0))},
		{"a2s", "PING", a2sReq('i')},
		{"a2s", "PING padded", a2sReq('i', []byte{0})},
		{"gamespy4", "handshake", []byte{0xFE, 0xFD, 0x09, 1, 2, 3, 4}},
		{"gamespy4", "handshake gamedig 11 B", []byte{0xFE, 0xFD, 0x09, 1, 2, 3, 4, 0, 0, 0, 0}},
		{"gamespy4", "basic stat bogus token", append([]byte{0xFE, 0xFD, 0x00, 1, 2, 3, 4}, be32(bogusToken)...)},
		{"gamespy4", "full stat bogus token", append(append([]byte{0xFE, 0xFD, 0x00, 1, 2, 3, 4}, be32(bogusToken)...), 0, 0, 0, 0)},
		{"sagl", "info token 0", saglReq(sagl.KindInfo, 0, 0)},
		{"sagl", "info bogus token", saglReq(sagl.KindInfo, bogusToken, 0)},
		{"sagl", "logo token 0", saglReq(sagl.KindLogo, 0, 0)},
		{"sagl", "logo bogus token", saglReq(sagl.KindLogo, bogusToken, 0)},
		{"quake3", "getinfo", []byte("\xFF\xFF\xFF\xFFgetinfo")},
		{"quake3", "getinfo challenge", []byte("\xFF\xFF\xFF\xFFgetinfo xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")},
		{"quake3", "getstatus", []byte("\xFF\xFF\xFF\xFFgetstatus")},
		{"quake3", "getstatus challenge", []byte("\xFF\xFF\xFF\xFFgetstatus 12345\n")},
		{"bedrock", "ping", bedrock.AppendPing(nil, 0x1122334455667788, 0)},
		{"bedrock", "ping open connections", bedrockPing02()},
		{"sqp", "challenge", []byte{0, 0, 0, 0, 0}},
		{"sqp", "query bogus token", append(append([]byte{1}, be32(bogusToken)...), 0, 1, 0x1F)},
		{"sqp", "query token 0", []byte{1, 0, 0, 0, 0, 0, 1, 0x07}},
		{"sqp", "query unknown chunks", append(append([]byte{1}, be32(bogusToken)...), 0, 1, 0xFF)},
	}
}

// bedrockPing02 is an unconnected ping with id 02 ("open connections"),
// as minecraft-server-util's time and GUID.
func bedrockPing02() []byte {
	p := bedrock.AppendPing(nil, 1_700_000_000_000, 2)
	p[0] = bedrock.IDPingOpenConn
	return p
}
