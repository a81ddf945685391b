package quake3

import (
	"errors"
	"net"
	"reflect"
	"testing"
	"time"
)

// fakeServer answers with h on a loopback socket until the test ends.
func fakeServer(t *testing.T, h *Handler) string {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	go func() {
		buf := make([]byte, 2048)
		scratch := make([]byte, MaxReply)
		for {
			n, src, err := c.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			out, _ := h.Answer(buf[:n], src, scratch, nil)
			for _, d := range out {
				c.WriteToUDPAddrPort(d, src)
			}
		}
	}()
	return c.LocalAddr().String()
}

func TestClient(t *testing.T) {
	h := handlerFor(t, exampleCfg, exampleDoc)
	c, err := Dial(fakeServer(t, h))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Timeout = 2 * time.Second
	inf, err := c.Info()
	if err != nil {
		t.Fatal(err)
	}
	if inf.Get("hostname") != "My Server" || inf.Get("clients") != "2" || len(inf.Get("challenge")) != 12 {
		t.Errorf("info %v", inf.Values)
	}
	st, err := c.Status()
	if err != nil {
		t.Fatal(err)
	}
	want := []PlayerLine{{12, 31, "Alice"}, {7, 0, "Bot"}}
	if !reflect.DeepEqual(st.Players, want) || st.Info.Get("mapname") != "q3dm17" || st.Info.Get("timelimit") != "20" {
		t.Errorf("status %v %+v", st.Info.Values, st.Players)
	}
}

func TestClientTimeout(t *testing.T) {
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cl, err := Dial(c.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	cl.Timeout = 100 * time.Millisecond
	if _, err := cl.Info(); err == nil {
		t.Error("a silent server answered")
	}
}

func TestParseReplies(t *testing.T) {
	bad := []string{
		"", q3 + "infoResponse", q3 + "infoResponse\nnoslash", q3 + "infoResponse\n\\k",
		q3 + "statusResponse\n\\k\\v\nnot a player", q3 + "statusResponse\n\\k\\v\n1 2 noquotes\n",
		q3 + "statusResponse\n\\k\\v\nx 2 \"n\"\n", q3 + "print\n",
	}
	for _, s := range bad {
		_, err1 := ParseInfoResponse([]byte(s))
		_, err2 := ParseStatusResponse([]byte(s))
		var bad1, bad2 *BadAnswerError
		if !errors.As(err1, &bad1) || !errors.As(err2, &bad2) {
			t.Errorf("%q: %v, %v; want BadAnswerErrors", s, err1, err2)
		}
	}
	st, err := ParseStatusResponse([]byte(q3 + "statusResponse\n\\a\\1\\b\\\n-4 999 \"x y \"z\"\n"))
	if err != nil || st.Info.Get("a") != "1" || len(st.Info.Keys) != 2 || st.Players[0] != (PlayerLine{-4, 999, `x y "z`}) {
		t.Errorf("%+v %v", st, err)
	}
}

// FuzzParseReplies: the client's reply parsers take any bytes without
// panicking, and what they refuse is a BadAnswerError.
func FuzzParseReplies(f *testing.F) {
	f.Add([]byte(q3 + "infoResponse\n\\challenge\\x\\hostname\\h"))
	f.Add([]byte(q3 + "statusResponse\n\\k\\v\n1 2 \"n\"\n-3 4 \"m\"\n"))
	f.Fuzz(func(t *testing.T, p []byte) {
		var bad *BadAnswerError
		if _, err := ParseInfoResponse(p); err != nil && !errors.As(err, &bad) {
			t.Fatalf("%v is not a BadAnswerError", err)
		}
		if _, err := ParseStatusResponse(p); err != nil && !errors.As(err, &bad) {
			t.Fatalf("%v is not a BadAnswerError", err)
		}
	})
}
