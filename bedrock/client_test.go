package bedrock

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

// pongOf builds a pong with the given time, GUID and status string.
func pongOf(t uint64, guid uint64, status string) []byte {
	b := []byte{IDPong}
	b = binary.BigEndian.AppendUint64(b, t)
	b = binary.BigEndian.AppendUint64(b, guid)
	b = append(b, Magic[:]...)
	b = binary.BigEndian.AppendUint16(b, uint16(len(status)))
	return append(b, status...)
}

// A vanilla Bedrock Dedicated Server's status (its GUID above 2^63), and
// an older server's six fields.
func TestParsePongVanilla(t *testing.T) {
	p, err := ParsePong(pongOf(7, 13253860892328930865, "MCPE;Dedicated Server;390;1.14.60;0;10;13253860892328930865;Bedrock level;Survival;1;19132;19133;"))
	if err != nil {
		t.Fatal(err)
	}
	want := Status{Edition: "MCPE", MOTD: "Dedicated Server", Protocol: 390, Version: "1.14.60", Players: 0, MaxPlayers: 10,
		ServerID: "13253860892328930865", SubMOTD: "Bedrock level", GameMode: "Survival", GameModeNumber: 1, IPv4Port: 19132, IPv6Port: 19133}
	if p.Status != want || p.Time != 7 || p.ServerGUID != 13253860892328930865 {
		t.Fatalf("got %+v\nwant %+v", p, want)
	}
	p, err = ParsePong(pongOf(7, 1, "MCPE;Old;100;0.15.0;3;20"))
	if err != nil || p.Status.MaxPlayers != 20 || p.Status.IPv4Port != 0 {
		t.Fatalf("six fields: %+v %v", p, err)
	}
}

func TestParsePongRejectsBroken(t *testing.T) {
	good := pongOf(7, 1, "MCPE;a;1;v;0;10;1;m;Survival;1;1;1;")
	cases := map[string][]byte{
		"empty":                 {},
		"header cut short":      good[:PongHeaderLen-1],
		"wrong id":              append([]byte{0x1D}, good[1:]...),
		"magic changed":         append(append(append([]byte{}, good[:20]...), 0x55), good[21:]...),
		"length too long":       append(append(append([]byte{}, good[:33]...), 0x01, 0x00), good[35:]...),
		"length too short":      append(append(append([]byte{}, good[:33]...), 0x00, 0x01), good[35:]...),
		"a byte after":          append(append([]byte{}, good...), 'x'),
		"not UTF-8":             pongOf(7, 1, "MCPE;\xff;1;v;0;10;"),
		"five fields":           pongOf(7, 1, "MCPE;a;1;v;0;"),
		"protocol not a number": pongOf(7, 1, "MCPE;a;x;v;0;10;"),
		"players empty":         pongOf(7, 1, "MCPE;a;1;v;;10;"),
		"port not a number":     pongOf(7, 1, "MCPE;a;1;v;0;10;1;m;S;1;port;1;"),
	}
	for name, p := range cases {
		var bad *BadAnswerError
		if _, err := ParsePong(p); !errors.As(err, &bad) {
			t.Errorf("%s: err %v, want a BadAnswerError", name, err)
		} else if strings.Contains(bad.Error(), "bedrock: bedrock") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
