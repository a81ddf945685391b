package sagl

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"testing"
)

func TestPutChallengeBytes(t *testing.T) {
	got := PutChallenge(make([]byte, 64), 0x11223344)
	want := []byte{'S', 'A', 'G', 'R', 1, 0, 0, 0, 0x44, 0x33, 0x22, 0x11}
	if !bytes.Equal(got, want) {
		t.Fatalf("challenge % x, want % x", got, want)
	}
	if len(got) != ChallengeSize || ChallengeSize >= RequestSize {
		t.Fatalf("challenge of %d bytes for a %d-byte request", len(got), RequestSize)
	}
}

func TestEncodePartsBytes(t *testing.T) {
	js := bytes.Repeat([]byte("x"), 2*PartSize+5)
	parts := EncodeParts(js, 0xA1B2C3D4)
	if len(parts) != 3 {
		t.Fatalf("%d parts, want 3", len(parts))
	}
	for i, p := range parts {
		want := []byte{'S', 'A', 'G', 'R', 1, 1, 0, 0, 0xD4, 0xC3, 0xB2, 0xA1}
		want = binary.LittleEndian.AppendUint32(want, uint32(len(js)))
		want = append(want, byte(i), 0, 3, 0)
		if !bytes.Equal(p[:InfoHeader], want) {
			t.Errorf("part %d header % x, want % x", i, p[:InfoHeader], want)
		}
		if len(p) > MaxDatagram {
			t.Errorf("part %d is %d bytes", i, len(p))
		}
	}
	if len(parts[0]) != MaxDatagram || len(parts[2]) != InfoHeader+5 {
		t.Errorf("part sizes %d, %d, %d", len(parts[0]), len(parts[1]), len(parts[2]))
	}
	small := EncodeParts([]byte(`{}`), 1)
	want := []byte{'S', 'A', 'G', 'R', 1, 1, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 1, 0, '{', '}'}
	if len(small) != 1 || !bytes.Equal(small[0], want) {
		t.Fatalf("one part % x, want % x", small, want)
	}
}

func TestAppendLogoPieceBytes(t *testing.T) {
	logo := testLogo(t)
	sum := sha256.Sum256(logo.Data)
	got := AppendLogoPiece(nil, logo, 3072)
	want := []byte{'S', 'A', 'G', 'R', 1, 2, 0, 0}
	want = binary.LittleEndian.AppendUint32(want, 3698)
	want = binary.LittleEndian.AppendUint32(want, 3072)
	want = append(append(want, sum[:]...), logo.Data[3072:]...)
	if !bytes.Equal(got, want) {
		t.Fatalf("last piece: got %d bytes, want %d: % x", len(got), len(want), got[:LogoHeader])
	}
	if n := len(AppendLogoPiece(nil, logo, 5)); n != LogoHeader+LogoPiece {
		t.Fatalf("piece at 5 is %d bytes, want %d", n, LogoHeader+LogoPiece)
	}
	none := AppendLogoPiece(nil, nil, 0)
	wantNone := append([]byte{'S', 'A', 'G', 'R', 1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, make([]byte, 32)...)
	if !bytes.Equal(none, wantNone) {
		t.Fatalf("no logo: % x", none)
	}
}

func TestNewLogo(t *testing.T) {
	png := testLogo(t).Data
	jpeg := append([]byte{0xFF, 0xD8, 0xFF, 0xE0}, make([]byte, 100)...)
	tests := []struct {
		name string
		data []byte
		max  int
		typ  string
	}{
		{"png", png, 1 << 20, "image/png"},
		{"jpeg", jpeg, 1 << 20, "image/jpeg"},
		{"png at the limit", png, len(png), "image/png"},
		{"png over the limit", png, len(png) - 1, ""},
		{"gif", []byte("GIF89a......"), 1 << 20, ""},
		{"text", []byte("hello"), 1 << 20, ""},
		{"empty", nil, 1 << 20, ""},
		{"png magic cut short", png[:7], 1 << 20, ""},
	}
	for _, tt := range tests {
		l, err := NewLogo(tt.data, tt.max)
		switch {
		case tt.typ == "" && err == nil:
			t.Errorf("%s: accepted", tt.name)
		case tt.typ != "" && (err != nil || l.Type != tt.typ || l.Sum != sha256.Sum256(tt.data)):
			t.Errorf("%s: %+v, %v", tt.name, l, err)
		}
	}
	if h := testLogo(t).Hex(); h != logoHex {
		t.Fatalf("Hex = %s", h)
	}
}
