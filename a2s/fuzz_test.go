package a2s

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"testing"
)

// FuzzAnswer feeds arbitrary datagrams to the handler: it must never panic,
// never answer an unproven source with more bytes than it sent (except the
// configured INFO), and only answer what it claims.
func FuzzAnswer(f *testing.F) {
	for _, seed := range []string{
		"\xFF\xFF\xFF\xFFTSource Engine Query\x00",
		"\xFF\xFF\xFF\xFFTSource Engine Query\x00\x01\x02\x03\x04",
		"\xFF\xFF\xFF\xFFTSOURCE\x00",
		"\xFF\xFF\xFF\xFFU\xFF\xFF\xFF\xFF",
		"\xFF\xFF\xFF\xFFV\x00\x00\x00\x00",
		"\xFF\xFF\xFF\xFFA\x01\x02\x03\x04",
		"\xFF\xFF\xFF\xFFi",
		"\xFF\xFF\xFF\xFFW",
		"",
	} {
		f.Add([]byte(seed))
	}
	h, _ := newTestHandler(f, defaultCfg())
	scratch := make([]byte, 2048)
	f.Fuzz(func(t *testing.T, req []byte) {
		_, perr := ParseRequest(req, true)
		out, o := h.Answer(req, client, scratch, nil)
		if perr != nil && len(out) > 0 {
			t.Fatalf("answered a request the parser rejects: %v", perr)
		}
		if !o.Proven() {
			n := 0
			for _, d := range out {
				n += len(d)
			}
			if n > len(req) {
				t.Fatalf("unproven reply of %d bytes to a %d-byte request", n, len(req))
			}
		}
	})
}

// FuzzClientReplies: the client's reply parsers and its split reassembly
// take any bytes without panicking; what they refuse is a BadAnswerError,
// and the fragments kept stay within the bounds.
func FuzzClientReplies(f *testing.F) {
	f.Add(bigInfo())
	f.Add(bigPlayers())
	f.Add([]byte("\xFF\xFF\xFF\xFFE\x01\x00k\x00v\x00"))
	f.Add([]byte("\xFE\xFF\xFF\xFF\x01\x00\x00\x00\x02\x00\xe0\x04xx"))
	f.Fuzz(func(t *testing.T, p []byte) {
		var bad *BadAnswerError
		for _, parse := range []func([]byte) error{
			func(p []byte) error { _, err := ParseInfo(p); return err },
			func(p []byte) error { _, err := ParsePlayers(p); return err },
			func(p []byte) error { _, err := ParseRules(p); return err },
		} {
			if err := parse(p); err != nil && !errors.As(err, &bad) {
				t.Fatalf("%v is not a BadAnswerError", err)
			}
		}
		var s splits
		for i := 0; i+12 <= len(p); i += 12 + int(p[i]%32) {
			d := append([]byte{0xFE, 0xFF, 0xFF, 0xFF}, p[i+4:min(len(p), i+12+int(p[i]%32))]...)
			if _, err := s.add(d); err != nil && !errors.As(err, &bad) {
				t.Fatalf("%v is not a BadAnswerError", err)
			}
			if len(s.pending) > maxSplits || s.bytes > maxSplitBytes {
				t.Fatalf("%d replies, %d bytes kept", len(s.pending), s.bytes)
			}
		}
		if err := s.failure(); err != nil && !errors.As(err, &bad) {
			t.Fatalf("%v is not a BadAnswerError", err)
		}
	})
}

// FuzzDecompress: a compressed split reply's size, CRC32 and bzip2 stream
// never panic, never yield more than MaxDecompressed bytes, and what is
// refused is a BadAnswerError.
func FuzzDecompress(f *testing.F) {
	stream, err := os.ReadFile("testdata/rules.bz2")
	if err != nil {
		f.Fatal(err)
	}
	plain := srcdsRules()
	head := binary.LittleEndian.AppendUint32(nil, uint32(len(plain)))
	head = binary.LittleEndian.AppendUint32(head, crc32.ChecksumIEEE(plain))
	f.Add(append(head, stream...))
	f.Add(append(binary.LittleEndian.AppendUint32(nil, MaxDecompressed), stream...))
	f.Add([]byte("\x04\x00\x00\x00\x00\x00\x00\x00BZh9"))
	f.Fuzz(func(t *testing.T, b []byte) {
		out, err := decompress(b)
		var bad *BadAnswerError
		if err != nil && !errors.As(err, &bad) {
			t.Fatalf("%v is not a BadAnswerError", err)
		}
		if len(out) > MaxDecompressed {
			t.Fatalf("%d bytes decompressed", len(out))
		}
	})
}
