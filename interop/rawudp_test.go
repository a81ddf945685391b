package interop

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// rawConn is a plain UDP socket for checking datagrams byte by byte.
type rawConn struct{ conn *net.UDPConn }

// dialRaw opens a UDP socket connected to addr; it closes when t ends.
func dialRaw(t testing.TB, addr string) *rawConn {
	t.Helper()
	ua, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		t.Fatalf("resolve %s: %v", addr, err)
	}
	c, err := net.DialUDP("udp", nil, ua)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{conn: c}
}

// ask sends req and returns every datagram that arrives: it waits up to 2 s
// for the first, then until 300 ms pass without another. It fails the test
// when nothing arrives.
func (c *rawConn) ask(t testing.TB, req []byte) [][]byte {
	t.Helper()
	if _, err := c.conn.Write(req); err != nil {
		t.Fatalf("send: %v", err)
	}
	var got [][]byte
	wait := 2 * time.Second
	for len(got) < 256 {
		c.conn.SetReadDeadline(time.Now().Add(wait))
		buf := make([]byte, 65536)
		n, err := c.conn.Read(buf)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			break
		}
		if err != nil {
			t.Fatalf("receive: %v", err)
		}
		got = append(got, buf[:n])
		wait = 300 * time.Millisecond
	}
	if len(got) == 0 {
		t.Fatalf("no reply to % X", req)
	}
	return got
}

// challenge sends req and returns the 4 token bytes of the 9-byte
// FF FF FF FF 41 <token> reply it must get.
func (c *rawConn) challenge(t testing.TB, req []byte) []byte {
	t.Helper()
	got := c.ask(t, req)
	if len(got) != 1 || len(got[0]) != 9 || string(got[0][:5]) != "\xFF\xFF\xFF\xFFA" {
		t.Fatalf("% X got %s; want one 9-byte challenge", req, hexDatagrams(got))
	}
	return got[0][5:]
}

// reassemble checks Source split fragments (FE FF FF FF, id, total, number,
// size) and returns the reply they carry; a single unsplit datagram is
// returned as it is.
func reassemble(t testing.TB, frags [][]byte) []byte {
	t.Helper()
	if len(frags) == 1 && strings.HasPrefix(string(frags[0]), "\xFF\xFF\xFF\xFF") {
		return frags[0]
	}
	parts := make([][]byte, len(frags))
	var id uint32
	for i, f := range frags {
		if len(f) < 12 || string(f[:4]) != "\xFE\xFF\xFF\xFF" {
			t.Fatalf("fragment %d is not a Source split packet: % X", i, f[:min(len(f), 16)])
		}
		if len(f) > 1400 {
			t.Errorf("fragment %d is %d bytes, over 1,400", i, len(f))
		}
		fid := binary.LittleEndian.Uint32(f[4:])
		if i == 0 {
			id = fid
		}
		if fid != id || fid&0x80008000 != 0 {
			t.Fatalf("fragment %d id %#x (first %#x): want one id with bits 31 and 15 clear", i, fid, id)
		}
		total, num, size := int(f[8]), int(f[9]), binary.LittleEndian.Uint16(f[10:])
		if total != len(frags) || num >= total || parts[num] != nil || size != 1248 {
			t.Fatalf("fragment %d: total %d number %d size %d, with %d fragments received", i, total, num, size, len(frags))
		}
		parts[num] = f[12:]
	}
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// hexDatagrams describes datagrams for a failure message.
func hexDatagrams(ds [][]byte) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d datagram(s)", len(ds))
	for _, d := range ds {
		fmt.Fprintf(&b, " [%d bytes: % X]", len(d), d[:min(len(d), 24)])
	}
	return b.String()
}
