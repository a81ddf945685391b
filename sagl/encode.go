package sagl

import (
	"encoding/binary"
)

// appendReplyHeader appends "SAGR", the version, kind and the reserved u16.
func appendReplyHeader(b []byte, kind byte) []byte {
	b = append(b, replyMagic[:]...)
	return append(b, Version, kind, 0, 0)
}

// PutChallenge writes the 12-byte challenge reply carrying token into b
// (at least ChallengeSize bytes) and returns it.
func PutChallenge(b []byte, token uint32) []byte {
	b = appendReplyHeader(b[:0], KindChallenge)
	return binary.LittleEndian.AppendUint32(b, token)
}

// EncodeParts splits the JSON into info replies of at most MaxDatagram
// bytes, numbered from 0, each with serial and the total length. A JSON that
// would need more than MaxParts parts is not sent (nil); the state limits
// keep it far below that.
func EncodeParts(js []byte, serial uint32) [][]byte {
	parts := max((len(js)+PartSize-1)/PartSize, 1)
	if parts > MaxParts {
		return nil
	}
	out := make([][]byte, 0, parts)
	for i := 0; i < parts; i++ {
		chunk := js[i*PartSize : min((i+1)*PartSize, len(js))]
		d := make([]byte, 0, InfoHeader+len(chunk))
		d = appendReplyHeader(d, KindInfo)
		d = binary.LittleEndian.AppendUint32(d, serial)
		d = binary.LittleEndian.AppendUint32(d, uint32(len(js)))
		d = binary.LittleEndian.AppendUint16(d, uint16(i))
		d = binary.LittleEndian.AppendUint16(d, uint16(parts))
		out = append(out, append(d, chunk...))
	}
	return out
}

// AppendLogoPiece appends the logo reply for offset: total size, offset,
// SHA-256 and up to LogoPiece bytes from offset. With a nil logo it is the
// "no logo" reply (size 0, zero hash). The caller checks the offset.
func AppendLogoPiece(b []byte, logo *Logo, offset uint32) []byte {
	b = appendReplyHeader(b, KindLogo)
	if logo == nil {
		b = binary.LittleEndian.AppendUint32(b, 0)
		b = binary.LittleEndian.AppendUint32(b, offset)
		var zero [32]byte
		return append(b, zero[:]...)
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(logo.Data)))
	b = binary.LittleEndian.AppendUint32(b, offset)
	b = append(b, logo.Sum[:]...)
	end := min(int(offset)+LogoPiece, len(logo.Data))
	return append(b, logo.Data[offset:end]...)
}

// encodeLogoPieces pre-encodes the replies for every offset that is a
// multiple of LogoPiece (what clients ask for); other offsets are encoded
// into scratch per query.
func encodeLogoPieces(logo *Logo) [][]byte {
	if logo == nil {
		return [][]byte{AppendLogoPiece(nil, nil, 0)}
	}
	n := (len(logo.Data) + LogoPiece - 1) / LogoPiece
	out := make([][]byte, n)
	for i := range out {
		out[i] = AppendLogoPiece(make([]byte, 0, LogoHeader+LogoPiece), logo, uint32(i*LogoPiece))
	}
	return out
}
