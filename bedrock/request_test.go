package bedrock

import (
	"bytes"
	"testing"
)

func TestParsePingClients(t *testing.T) {
	for name, hx := range map[string]string{"minecraft-server-util": mcsuPing, "gamedig": gamedigPing} {
		p := unhex(t, hx)
		if !Claims(p) {
			t.Fatalf("%s: not claimed", name)
		}
		ping, err := ParsePing(p)
		if err != nil || ping.ID != IDPing || !bytes.Equal(ping.Time[:], p[1:9]) {
			t.Fatalf("%s: %+v %v", name, ping, err)
		}
	}
	p := unhex(t, mcsuPing)
	if ping, _ := ParsePing(p); ping.ClientGUID != 2 {
		t.Errorf("client GUID %d, want 2", ping.ClientGUID)
	}
	p[0] = IDPingOpenConn
	if ping, err := ParsePing(p); err != nil || ping.ID != IDPingOpenConn {
		t.Errorf("02: %+v %v", ping, err)
	}
	if got := AppendPing(nil, 0x0102030405060708, 9); !bytes.Equal(got, unhex(t, "01 01 02 03 04 05 06 07 08 "+magicHex+" 00 00 00 00 00 00 00 09")) {
		t.Errorf("AppendPing % x", got)
	}
}

// Malformed pings: what is not claimed goes to the next protocol (or the
// relay); what is claimed but broken is dropped as malformed.
func TestParsePingMalformed(t *testing.T) {
	ping := unhex(t, mcsuPing)
	cases := []struct {
		name   string
		p      []byte
		claims bool
	}{
		{"empty", nil, false},
		{"one byte", []byte{IDPing}, false},
		{"cut after the magic", ping[:25], false},
		{"32 bytes", ping[:32], false},
		{"34 bytes", append(bytes.Clone(ping), 0), false},
		{"1,500 bytes", append(bytes.Clone(ping), make([]byte, 1467)...), false},
		{"id 00", append([]byte{0x00}, ping[1:]...), true},
		{"id 03", append([]byte{0x03}, ping[1:]...), true},
		{"id 1C (a pong's)", append([]byte{IDPong}, ping[1:]...), true},
		{"id 05", append([]byte{0x05}, ping[1:]...), true},
		{"open connection request 1 (magic at 1)", append(append([]byte{0x05}, Magic[:]...), make([]byte, 16)...), false},
	}
	for i := 0; i < 16; i++ {
		m := bytes.Clone(ping)
		m[9+i] ^= 0x01
		cases = append(cases, struct {
			name   string
			p      []byte
			claims bool
		}{"magic byte changed", m, false})
	}
	for _, c := range cases {
		if got := Claims(c.p); got != c.claims {
			t.Errorf("%s: Claims %v, want %v", c.name, got, c.claims)
		}
		if _, err := ParsePing(c.p); err == nil {
			t.Errorf("%s: parsed", c.name)
		}
	}
}
