package a2s

import (
	"encoding/binary"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/queryd/queryd/state"
)

// Size limits of the encoded replies.
const (
	// MaxPacket is the largest datagram sent unsplit (Steam's 1,400 bytes).
	MaxPacket = 1400
	// FragmentPayload is the payload carried by one split fragment (Source's default 1,248).
	FragmentPayload = 1248
	// MaxFragments caps a split reply; lists that would need more are cut
	// short. 15, not 255: some clients (github.com/woozymasta/a2s) read the
	// fragment count from 4 bits, as in the GoldSrc layout.
	MaxFragments = 15
	// MaxReply is the largest PLAYER or RULES payload queryd sends.
	MaxReply = MaxFragments * FragmentPayload
	// MaxListed is the most players A2S can list (its count is one byte).
	MaxListed = 255
)

// Byte caps of A2S_INFO strings, so INFO always fits one packet; longer
// values are cut at a UTF-8 boundary.
const (
	capName     = 256
	capMap      = 128
	capFolder   = 64
	capGame     = 128
	capVersion  = 64
	capKeywords = 256
	capTVName   = 128
)

// EDF (extra data flag) bits of A2S_INFO.
const (
	edfPort     = 0x80
	edfSteamID  = 0x10
	edfSourceTV = 0x40
	edfKeywords = 0x20
	edfGameID   = 0x01
)

// appendCString appends s cut to at most max bytes (at a rune boundary) and a NUL.
func appendCString(b []byte, s string, max int) []byte {
	if len(s) > max {
		s = s[:max]
		for len(s) > 0 && !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
	}
	b = append(b, s...)
	return append(b, 0)
}

// Listed returns how many of snap's players A2S lists: at most 255, and no
// more than fit in a PLAYER reply of MaxReply bytes. A2S_INFO reports the same number.
func Listed(snap *state.Snapshot) int {
	size := 4 + 1 + 1
	for i, p := range snap.Players {
		if i == MaxListed {
			return i
		}
		size += 1 + min(len(p.Name), state.MaxPlayerName*4) + 1 + 4 + 4
		if size > MaxReply {
			return i
		}
	}
	return len(snap.Players)
}

// EncodeInfo returns the A2S_INFO reply datagram for snap; the state's
// "a2s" object overrides cfg's app id, protocol and game id (Config.For).
func EncodeInfo(cfg Config, snap *state.Snapshot, listed int) []byte {
	cfg = cfg.For(snap)
	b := make([]byte, 0, 256+len(snap.Name)+len(snap.Keywords))
	b = append(b, 0xFF, 0xFF, 0xFF, 0xFF, ReplyInfo, cfg.Protocol)
	b = appendCString(b, snap.Name, capName)
	b = appendCString(b, snap.Map, capMap)
	b = appendCString(b, snap.Folder, capFolder)
	b = appendCString(b, snap.Game, capGame)
	b = binary.LittleEndian.AppendUint16(b, cfg.AppID)
	bots := 0
	for _, p := range snap.Players[:listed] {
		if p.Bot {
			bots++
		}
	}
	b = append(b, byte(listed), byte(min(snap.MaxPlayers, 255)), byte(bots),
		serverType(snap.ServerType), environment(snap.OS), flag(snap.Password), flag(snap.VAC))
	b = appendCString(b, snap.GameVersion, capVersion)
	return appendEDF(b, cfg, snap)
}

func appendEDF(b []byte, cfg Config, snap *state.Snapshot) []byte {
	port := snap.GamePort
	if port == 0 {
		port = cfg.GamePort
	}
	keywords := snap.Keywords
	if keywords == "" {
		keywords = strings.Join(snap.Tags, ",")
	}
	edf := byte(edfPort)
	if snap.SteamID != 0 {
		edf |= edfSteamID
	}
	if snap.SourceTV != nil {
		edf |= edfSourceTV
	}
	if keywords != "" {
		edf |= edfKeywords
	}
	if cfg.GameID != 0 {
		edf |= edfGameID
	}
	b = append(b, edf)
	b = binary.LittleEndian.AppendUint16(b, port)
	if edf&edfSteamID != 0 {
		b = binary.LittleEndian.AppendUint64(b, snap.SteamID)
	}
	if edf&edfSourceTV != 0 {
		b = binary.LittleEndian.AppendUint16(b, snap.SourceTV.Port)
		b = appendCString(b, snap.SourceTV.Name, capTVName)
	}
	if edf&edfKeywords != 0 {
		b = appendCString(b, keywords, capKeywords)
	}
	if edf&edfGameID != 0 {
		b = binary.LittleEndian.AppendUint64(b, cfg.GameID)
	}
	return b
}

func serverType(t string) byte {
	switch t {
	case "listen":
		return 'l'
	case "proxy":
		return 'p'
	}
	return 'd'
}

func environment(os string) byte {
	switch os {
	case "windows":
		return 'w'
	case "mac":
		return 'm'
	}
	return 'l'
}

func flag(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// EncodePlayers returns the A2S_PLAYER reply payload (with its FF FF FF FF
// header, before splitting) listing the first listed players, with their
// connection durations as of now.
func EncodePlayers(snap *state.Snapshot, listed int, now time.Time) []byte {
	b := make([]byte, 0, 6+listed*24)
	b = append(b, 0xFF, 0xFF, 0xFF, 0xFF, ReplyPlayer, byte(listed))
	for i, p := range snap.Players[:listed] {
		b = append(b, byte(i))
		b = appendCString(b, p.Name, state.MaxPlayerName*4)
		b = binary.LittleEndian.AppendUint32(b, uint32(p.Score))
		d := float32(max(now.Sub(p.Since).Seconds(), 0))
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(d))
	}
	return b
}

// EncodeRules returns the A2S_RULES reply payload (before splitting). Rules
// that would make it longer than MaxReply are left out.
func EncodeRules(snap *state.Snapshot) []byte {
	b := make([]byte, 7, 64)
	copy(b, []byte{0xFF, 0xFF, 0xFF, 0xFF, ReplyRules})
	n := 0
	for _, r := range snap.Rules {
		if len(b)+len(r.Key)+len(r.Value)+2 > MaxReply {
			break
		}
		b = appendCString(b, r.Key, len(r.Key))
		b = appendCString(b, r.Value, len(r.Value))
		n++
	}
	binary.LittleEndian.PutUint16(b[5:], uint16(n))
	return b
}

// Split turns a reply payload into datagrams: the payload itself when it fits
// one packet, else Source split fragments (header -2, id, total, number,
// size 1,248) of at most FragmentPayload bytes each. id must have bits 31
// (compressed) and 15 clear; Split clears them.
func Split(payload []byte, id uint32) [][]byte {
	if len(payload) <= MaxPacket {
		return [][]byte{payload}
	}
	id &= 0x7FFF7FFF
	total := (len(payload) + FragmentPayload - 1) / FragmentPayload
	out := make([][]byte, 0, total)
	for n := 0; n < total; n++ {
		part := payload[n*FragmentPayload : min((n+1)*FragmentPayload, len(payload))]
		d := make([]byte, 0, 12+len(part))
		d = append(d, 0xFE, 0xFF, 0xFF, 0xFF)
		d = binary.LittleEndian.AppendUint32(d, id)
		d = append(d, byte(total), byte(n))
		d = binary.LittleEndian.AppendUint16(d, FragmentPayload)
		out = append(out, append(d, part...))
	}
	return out
}
