package sagl

import (
	"bytes"
	"encoding/binary"
	"net"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"
)

// udpServer serves h on a loopback socket until the test ends. drop, when
// set, is asked for every reply datagram: true drops it (a lost packet).
func udpServer(t *testing.T, serve func(req []byte, src netip.AddrPort, scratch []byte) [][]byte) string {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { c.Close(); <-done })
	go func() {
		defer close(done)
		buf, scratch := make([]byte, 2048), make([]byte, 2048)
		for {
			n, src, err := c.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			for _, d := range serve(buf[:n], src, scratch) {
				c.WriteToUDPAddrPort(d, src)
			}
		}
	}()
	return c.LocalAddr().String()
}

func handlerServer(t *testing.T, h *Handler, drop func(d []byte) bool) string {
	return udpServer(t, func(req []byte, src netip.AddrPort, scratch []byte) [][]byte {
		out, _ := h.Answer(req, src, scratch, nil)
		var kept [][]byte
		for _, d := range out {
			if drop == nil || !drop(d) {
				kept = append(kept, d)
			}
		}
		return kept
	})
}

func dialTest(t *testing.T, addr string) *Client {
	c, err := Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.Timeout, c.Retry = 3*time.Second, 100*time.Millisecond
	return c
}

func TestClientThousandPlayers(t *testing.T) {
	h := newHandler(t, manyPlayers(1000), nil)
	c := dialTest(t, handlerServer(t, h, nil))
	res, err := c.Info()
	if err != nil {
		t.Fatal(err)
	}
	js, serial := h.JSON()
	if !bytes.Equal(res.JSON, js) || res.Serial != serial || res.RTT <= 0 {
		t.Fatalf("got %d bytes serial %08x rtt %v; want %d bytes serial %08x", len(res.JSON), res.Serial, res.RTT, len(js), serial)
	}
	p := res.Info.Players
	if p == nil || p.Online != 1000 || len(p.List) != 1000 || p.Truncated || p.List[999].Name != "Player 1999" {
		t.Fatalf("players %+v", p)
	}
}

// Lost parts are asked for again; the client ends with the whole JSON.
func TestClientLostParts(t *testing.T) {
	h := newHandler(t, manyPlayers(300), nil)
	var n atomic.Int32
	c := dialTest(t, handlerServer(t, h, func(d []byte) bool {
		return d[5] == KindInfo && n.Add(1)%3 == 0 // lose every third part
	}))
	res, err := c.Info()
	if err != nil {
		t.Fatal(err)
	}
	if js, _ := h.JSON(); !bytes.Equal(res.JSON, js) {
		t.Fatal("reassembled JSON differs")
	}
}

// The JSON changes between two requests while parts of the first are lost:
// the client must drop the old serial's parts and return the new JSON.
func TestClientSerialChangeMidTransfer(t *testing.T) {
	st := newStore(t, manyPlayers(200))
	h := NewHandler(Config{}, testIssuer())
	h.Update(st.Snapshot())
	oldJS, oldSerial := h.JSON()
	var answered atomic.Int32
	addr := udpServer(t, func(req []byte, src netip.AddrPort, scratch []byte) [][]byte {
		out, o := h.Answer(req, src, scratch, nil)
		if o.Proven() && answered.Add(1) == 1 {
			// first answer: half the old parts, then the state changes
			if _, err := st.Patch(map[string]any{"name": "Renamed"}); err != nil {
				t.Error(err)
			}
			h.Update(st.Snapshot())
			return out[:len(out)/2]
		}
		if o.Proven() { // later answers: the new JSON, the last part first
			out[0], out[len(out)-1] = out[len(out)-1], out[0]
		}
		return out
	})
	c := dialTest(t, addr)
	res, err := c.Info()
	if err != nil {
		t.Fatal(err)
	}
	newJS, newSerial := h.JSON()
	if newSerial == oldSerial || res.Serial != newSerial || !bytes.Equal(res.JSON, newJS) || res.Info.Name != "Renamed" {
		t.Fatalf("got serial %08x %q; old %08x (%d bytes), new %08x", res.Serial, res.Info.Name, oldSerial, len(oldJS), newSerial)
	}
}

func TestClientLogo(t *testing.T) {
	logo := testLogo(t)
	h := newHandler(t, exampleDoc, logo)
	var lost atomic.Int32
	c := dialTest(t, handlerServer(t, h, func(d []byte) bool {
		return d[5] == KindLogo && binary.LittleEndian.Uint32(d[12:]) == 2048 && lost.Add(1) == 1
	}))
	res, err := c.Info()
	if err != nil {
		t.Fatal(err)
	}
	if res.Info.Branding.Logo == nil || res.Info.Branding.Logo.SHA256 != logoHex || res.Info.Branding.Logo.Size != 3698 {
		t.Fatalf("branding %+v", res.Info.Branding)
	}
	lr, err := c.Logo()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(lr.Data, logo.Data) || lr.Sum != logo.Sum {
		t.Fatalf("logo of %d bytes", len(lr.Data))
	}
	none := dialTest(t, handlerServer(t, newHandler(t, exampleDoc, nil), nil))
	if lr, err := none.Logo(); err != nil || lr.Data != nil {
		t.Fatalf("no logo: %+v, %v", lr, err)
	}
}

// A server that lies about the hash is caught.
func TestClientLogoHashMismatch(t *testing.T) {
	logo := *testLogo(t)
	logo.Sum[0] ^= 1
	c := dialTest(t, handlerServer(t, newHandler(t, exampleDoc, &logo), nil))
	if _, err := c.Logo(); err == nil {
		t.Fatal("a logo that does not match its hash was accepted")
	}
}

func TestClientNoAnswer(t *testing.T) {
	c := dialTest(t, udpServer(t, func([]byte, netip.AddrPort, []byte) [][]byte { return nil }))
	c.Timeout = 300 * time.Millisecond
	start := time.Now()
	if _, err := c.Info(); err == nil || time.Since(start) > 2*time.Second {
		t.Fatalf("silent server: %v after %v", err, time.Since(start))
	}
}

// The client's reply parsers take any bytes without panicking.
func FuzzClientReplies(f *testing.F) {
	f.Add(EncodeParts([]byte(`{"query":1}`), 5)[0])
	f.Add(AppendLogoPiece(nil, nil, 0))
	f.Add(PutChallenge(make([]byte, 12), 9))
	f.Fuzz(func(t *testing.T, p []byte) {
		var a assembly
		if a.add(p) == "" {
			a.done()
			a.progress()
		}
		var lf logoFetch
		if lf.add(p) == "" {
			lf.done()
			lf.missing(4)
			lf.progress()
		}
		parseToken(p)
		checkJSON(p)
	})
}
