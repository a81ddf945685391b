package a2s

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/queryd/queryd/internal/udptest"
)

// srcdsRules is an A2S_RULES payload like a Source server with many plugins
// sends (144 rules, 4,209 bytes): testdata/rules.bz2 is `bzip2 -9` of it.
func srcdsRules() []byte {
	b := []byte{0xFF, 0xFF, 0xFF, 0xFF, ReplyRules, 0, 0}
	n := 0
	add := func(k, v string) {
		b = append(append(append(append(b, k...), 0), v...), 0)
		n++
	}
	for i := 0; i < 140; i++ {
		add(fmt.Sprintf("sm_plugin_%03d_version", i), fmt.Sprintf("%d.%d.%d", i%7, i%11, i))
	}
	add("mp_timelimit", "30")
	add("sv_tags", "alltalk,increased_maxplayers,trade")
	add("sv_contact", "admin@example.org")
	add("tv_enable", "1")
	binary.LittleEndian.PutUint16(b[5:], uint16(n))
	return b
}

// fragments cuts payload into split datagrams as srcds does: FE FF FF FF,
// the id, the count, the number, then (sizeField) the u16 size 1,248, and
// pieces of at most per bytes; head goes before the first piece (the
// compressed reply's size and CRC32).
func fragments(id uint32, payload []byte, per int, sizeField bool, head []byte) [][]byte {
	var pieces [][]byte
	for len(payload) > 0 {
		n := min(per, len(payload))
		pieces, payload = append(pieces, payload[:n]), payload[n:]
	}
	out := make([][]byte, len(pieces))
	for i, p := range pieces {
		d := binary.LittleEndian.AppendUint32([]byte{0xFE, 0xFF, 0xFF, 0xFF}, id)
		d = append(d, byte(len(pieces)), byte(i))
		if sizeField {
			d = binary.LittleEndian.AppendUint16(d, FragmentPayload)
		}
		if i == 0 {
			d = append(d, head...)
		}
		out[i] = append(d, p...)
	}
	return out
}

// compressed returns the bzip2 fixture and the header of a compressed
// reply's first fragment: the decompressed size and its CRC32.
func compressed(t *testing.T) (stream, head []byte) {
	t.Helper()
	stream, err := os.ReadFile("testdata/rules.bz2")
	if err != nil {
		t.Fatal(err)
	}
	plain := srcdsRules()
	head = binary.LittleEndian.AppendUint32(nil, uint32(len(plain)))
	head = binary.LittleEndian.AppendUint32(head, crc32.ChecksumIEEE(plain))
	return stream, head
}

// reassemble feeds frags to a fresh splits in the order given.
func reassemble(frags [][]byte) ([]byte, error) {
	var s splits
	for _, f := range frags {
		whole, err := s.add(f)
		if err != nil || whole != nil {
			return whole, err
		}
	}
	return nil, s.failure()
}

// Split replies in every layout reassemble to the reply, in any order: the
// Source layout (srcds's 1,248-byte pieces with the size field), old
// engines without the size field, and bzip2-compressed replies (bit 31 of
// the id) with and without it.
func TestSplitLayouts(t *testing.T) {
	plain := srcdsRules()
	stream, head := compressed(t)
	for name, frags := range map[string][][]byte{
		"source":                   fragments(0x157, plain, FragmentPayload, true, nil),
		"without size field":       fragments(0x157, plain, 1391, false, nil),
		"compressed":               fragments(0x80000157, stream, 300, true, head),
		"compressed, no size":      fragments(0x80000157, stream, 300, false, head),
		"compressed, one fragment": fragments(0x80000001, stream, 1248, true, head),
	} {
		t.Run(name, func(t *testing.T) {
			if len(frags) < 2 && !strings.Contains(name, "one") {
				t.Fatalf("%d fragments", len(frags))
			}
			for _, order := range []string{"in order", "reversed"} {
				fs := append([][]byte(nil), frags...)
				if order == "reversed" {
					for i, j := 0, len(fs)-1; i < j; i, j = i+1, j-1 {
						fs[i], fs[j] = fs[j], fs[i]
					}
				}
				got, err := reassemble(fs)
				if err != nil || !bytes.Equal(got, plain) {
					t.Fatalf("%s: %d bytes, err %v; want the %d-byte reply", order, len(got), err, len(plain))
				}
			}
			rules, err := ParseRules(plain)
			if err != nil || len(rules) != 144 || rules[143] != [2]string{"tv_enable", "1"} {
				t.Fatalf("%d rules, %v", len(rules), err)
			}
		})
	}
}

// Compressed replies that cannot be read are refused with a BadAnswerError
// naming why, before decompressing anything when the declared size is over
// MaxDecompressed.
func TestSplitCompressedRefused(t *testing.T) {
	stream, head := compressed(t)
	size := binary.LittleEndian.Uint32(head)
	withHead := func(n, sum uint32) []byte {
		h := binary.LittleEndian.AppendUint32(nil, n)
		return binary.LittleEndian.AppendUint32(h, sum)
	}
	corrupt := append([]byte(nil), stream...)
	corrupt[len(corrupt)/2] ^= 0xFF
	for name, c := range map[string]struct {
		frags [][]byte
		want  string
	}{
		"over the cap":     {fragments(0x80000002, stream, 1248, true, withHead(MaxDecompressed+1, 0)), "over the client's cap of 262144 bytes"},
		"4 GiB declared":   {fragments(0x80000002, stream, 1248, true, withHead(0xFFFFFFFF, 0)), "4294967295 bytes once decompressed"},
		"wrong CRC32":      {fragments(0x80000002, stream, 1248, true, withHead(size, 1)), "CRC32"},
		"size too small":   {fragments(0x80000002, stream, 1248, true, withHead(size-1, 0)), "its header says 4208"},
		"size too large":   {fragments(0x80000002, stream, 1248, true, withHead(size+1, 0)), "its header says 4210"},
		"corrupt stream":   {fragments(0x80000002, corrupt, 400, true, head), "bzip2"},
		"stream cut short": {fragments(0x80000002, stream[:500], 400, true, head), "bzip2"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := reassemble(c.frags)
			udptest.WantBadAnswer(t, err, c.want)
		})
	}
}

// A split reply whose first fragment starts no reply in either layout is
// dropped, and the call says so at its end.
func TestSplitNoReplyStart(t *testing.T) {
	frags := fragments(7, bytes.Repeat([]byte{'x'}, 3000), 1248, true, nil)
	_, err := reassemble(frags)
	var bad *BadAnswerError
	if !errors.As(err, &bad) || !strings.Contains(err.Error(), "first fragment starts no reply") {
		t.Fatalf("err %v", err)
	}
}

// End to end: a server answering RULES with a compressed split reply (an
// old Source engine's) is read by Client.Rules.
func TestClientCompressedRules(t *testing.T) {
	stream, head := compressed(t)
	addr := udptest.Answer(t, func(req []byte) [][]byte {
		if len(req) >= 5 && req[4] == TypeRules {
			return fragments(0x80000042, stream, 300, true, head)
		}
		return nil
	})
	rules, err := hostileClient(t, addr).Rules()
	if err != nil || len(rules) != 144 || rules[0] != [2]string{"sm_plugin_000_version", "0.0.0"} {
		t.Fatalf("%d rules, %v", len(rules), err)
	}
}

// goldsrcFragments cuts payload into split datagrams in GoldSrc's layout
// (Valve's developer wiki, "Server queries", Goldsource): FE FF FF FF, the
// id, one byte with the number in its high nibble and the count in its
// low one, then the piece (GoldSrc's 1,400-byte packets).
func goldsrcFragments(id uint32, payload []byte, per int) [][]byte {
	var pieces [][]byte
	for len(payload) > 0 {
		n := min(per, len(payload))
		pieces, payload = append(pieces, payload[:n]), payload[n:]
	}
	out := make([][]byte, len(pieces))
	for i, p := range pieces {
		d := binary.LittleEndian.AppendUint32([]byte{0xFE, 0xFF, 0xFF, 0xFF}, id)
		out[i] = append(append(d, byte(i<<4|len(pieces))), p...)
	}
	return out
}

// GoldSrc's split layout reassembles, in order and reversed, and so does
// the smallest case (two fragments, the second number 1 of 2, whose byte
// 0x12 would be a Source count of 18).
func TestSplitGoldSrc(t *testing.T) {
	plain := srcdsRules()
	for name, frags := range map[string][][]byte{
		"GoldSrc, 1,400-byte packets": goldsrcFragments(0x2a, plain, 1391),
		"GoldSrc, two fragments":      goldsrcFragments(0x2b, plain[:2000], 1391),
	} {
		for _, reverse := range []bool{false, true} {
			fs := append([][]byte(nil), frags...)
			if reverse {
				slices.Reverse(fs)
			}
			want := plain
			if len(frags) == 2 {
				want = plain[:2000]
			}
			got, err := reassemble(fs)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("%s (reversed %v): %d bytes, err %v; want %d", name, reverse, len(got), err, len(want))
			}
		}
	}
}
