package sagl

import (
	"bytes"
	"testing"
)

func req(kind byte, token, offset uint32) []byte {
	return AppendRequest(nil, Request{Kind: kind, Token: token, Offset: offset})
}

func TestAppendRequestBytes(t *testing.T) {
	got := req(KindLogo, 0x11223344, 0x0400)
	want := make([]byte, 64)
	copy(want, []byte{'S', 'A', 'G', 'Q', 1, 2, 0, 0, 0x44, 0x33, 0x22, 0x11, 0x00, 0x04, 0, 0})
	if !bytes.Equal(got, want) {
		t.Fatalf("request\n got % x\nwant % x", got, want)
	}
}

func TestParseRequest(t *testing.T) {
	padded := req(KindInfo, 7, 0)
	padded[63], padded[6] = 0xAA, 1 // padding and reserved bytes are not checked
	tests := []struct {
		name string
		p    []byte
		want Request
		ok   bool
	}{
		{"info first time", req(KindInfo, 0, 0), Request{Kind: KindInfo}, true},
		{"logo with token", req(KindLogo, 0xDEADBEEF, 2048), Request{KindLogo, 0xDEADBEEF, 2048}, true},
		{"non-zero padding", padded, Request{Kind: KindInfo, Token: 7}, true},
		{"empty", nil, Request{}, false},
		{"magic only", []byte("SAGQ"), Request{}, false},
		{"63 bytes", req(KindInfo, 0, 0)[:63], Request{}, false},
		{"65 bytes", append(req(KindInfo, 0, 0), 0), Request{}, false},
		{"bad magic", append([]byte("SAGX"), req(KindInfo, 0, 0)[4:]...), Request{}, false},
		{"version 0", with(req(KindInfo, 0, 0), 4, 0), Request{}, false},
		{"version 2", with(req(KindInfo, 0, 0), 4, 2), Request{}, false},
		{"kind 0 (the challenge is a reply)", with(req(KindInfo, 0, 0), 5, 0), Request{}, false},
		{"kind 3", with(req(KindInfo, 0, 0), 5, 3), Request{}, false},
		{"a reply, not a request", append([]byte("SAGR"), req(KindInfo, 0, 0)[4:]...), Request{}, false},
	}
	for _, tt := range tests {
		got, err := ParseRequest(tt.p)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("%s: ParseRequest = %+v, %v; want %+v, ok=%v", tt.name, got, err, tt.want, tt.ok)
		}
	}
}

func with(p []byte, i int, v byte) []byte {
	p[i] = v
	return p
}

func TestClaims(t *testing.T) {
	for p, want := range map[string]bool{
		"SAGQ": true, "SAGQ\x01\x01": true, "SAG": false, "SAGR\x01": false,
		"\xFF\xFF\xFF\xFFTSource": false, "\xFE\xFD\x09": false,
	} {
		if Claims([]byte(p)) != want {
			t.Errorf("Claims(%q) = %v, want %v", p, !want, want)
		}
	}
}

func FuzzParseRequest(f *testing.F) {
	f.Add(req(KindInfo, 0, 0))
	f.Add(req(KindLogo, 12345, 1024))
	f.Add([]byte("SAGQ"))
	f.Add(with(req(KindInfo, 0, 0), 5, 9))
	f.Fuzz(func(t *testing.T, p []byte) {
		r, err := ParseRequest(p)
		if err != nil {
			if r != (Request{}) {
				t.Fatalf("error %v with a non-zero request %+v", err, r)
			}
			return
		}
		if len(p) != RequestSize || !Claims(p) {
			t.Fatalf("accepted %d bytes % x", len(p), p[:min(len(p), 8)])
		}
		again, err := ParseRequest(AppendRequest(nil, r))
		if err != nil || again != r {
			t.Fatalf("round trip of %+v gave %+v, %v", r, again, err)
		}
	})
}
