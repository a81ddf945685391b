package bedrock

import (
	"encoding/binary"
	"errors"
)

// Magic is RakNet's "offline message" magic: bytes 9 to 24 of an
// unconnected ping, 17 to 32 of the pong.
var Magic = [16]byte{0x00, 0xFF, 0xFF, 0x00, 0xFE, 0xFE, 0xFE, 0xFE, 0xFD, 0xFD, 0xFD, 0xFD, 0x12, 0x34, 0x56, 0x78}

// RakNet message ids of the status exchange.
const (
	IDPing         = 0x01 // ID_UNCONNECTED_PING
	IDPingOpenConn = 0x02 // ID_UNCONNECTED_PING_OPEN_CONNECTIONS
	IDPong         = 0x1C // ID_UNCONNECTED_PONG
)

// PingLen is the size of an unconnected ping: the id, the i64 time, the
// magic and the i64 client GUID.
const PingLen = 1 + 8 + 16 + 8

// Offsets in a ping.
const (
	pingTime  = 1
	pingMagic = 9
	pingGUID  = 25
)

var (
	errLength = errors.New("bedrock: a ping is exactly 33 bytes")
	errMagic  = errors.New("bedrock: no RakNet magic at offset 9")
	errID     = errors.New("bedrock: message id is not 01 or 02 (unconnected ping)")
)

// Ping is one parsed unconnected ping.
type Ping struct {
	ID         byte    // IDPing or IDPingOpenConn
	Time       [8]byte // the client's time, echoed as received in the pong
	ClientGUID uint64
}

// Claims reports whether p is a datagram of exactly PingLen bytes with the
// RakNet magic at offset 9: the shape of an unconnected ping whatever its
// first byte (a wrong message id is then malformed, not someone else's).
// RakNet's other offline messages carry the magic at offset 1 and are
// longer, so relay mode still forwards them to a Bedrock server.
func Claims(p []byte) bool {
	return len(p) == PingLen && [16]byte(p[pingMagic:pingMagic+16]) == Magic
}

// ParsePing parses an unconnected ping: exactly PingLen bytes, message id
// 01 or 02, the magic at offset 9.
func ParsePing(p []byte) (Ping, error) {
	if len(p) != PingLen {
		return Ping{}, errLength
	}
	if [16]byte(p[pingMagic:pingMagic+16]) != Magic {
		return Ping{}, errMagic
	}
	if p[0] != IDPing && p[0] != IDPingOpenConn {
		return Ping{}, errID
	}
	return Ping{ID: p[0], Time: [8]byte(p[pingTime : pingTime+8]), ClientGUID: binary.BigEndian.Uint64(p[pingGUID:])}, nil
}

// AppendPing appends an unconnected ping (id 01) with time t and the
// client's GUID to b.
func AppendPing(b []byte, t, clientGUID uint64) []byte {
	b = append(b, IDPing)
	b = binary.BigEndian.AppendUint64(b, t)
	b = append(b, Magic[:]...)
	return binary.BigEndian.AppendUint64(b, clientGUID)
}
