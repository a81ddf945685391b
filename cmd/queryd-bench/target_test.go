package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestTargetLoopbackOnly(t *testing.T) {
	for _, s := range []string{"127.0.0.1:27015", "127.1.2.3:1", "[::1]:27015", "[::ffff:127.0.0.1]:9"} {
		if _, err := parseTarget(s); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	for _, s := range []string{"10.0.0.1:27015", "192.168.1.1:27015", "0.0.0.0:27015", "[::2]:27015", "[::]:1",
		"8.8.8.8:53", "[::ffff:10.0.0.1]:9", "localhost:27015", "127.0.0.1", "127.0.0.1:0"} {
		if _, err := parseTarget(s); err == nil {
			t.Errorf("%s: accepted", s)
		}
	}
	_, err := parseTarget("10.1.2.3:27015")
	if err == nil || !strings.Contains(err.Error(), "only targets loopback") {
		t.Fatalf("want a clear refusal, got %v", err)
	}
}

func TestLoadRefusesRemoteTarget(t *testing.T) {
	var out, errb bytes.Buffer
	if rc := run([]string{"load", "-target", "192.0.2.1:27015"}, &out, &errb); rc != 2 || !strings.Contains(errb.String(), "refused") {
		t.Fatalf("exit %d, stderr %q", rc, errb.String())
	}
	if rc := run([]string{"fixed", "-listen", "0.0.0.0:27016"}, &out, &errb); rc != 2 {
		t.Fatalf("fixed on 0.0.0.0: exit %d", rc)
	}
}

func TestLoadFlagBounds(t *testing.T) {
	for _, args := range [][]string{
		{"-duration", "6m"}, {"-duration", "0s"}, {"-duration", "4m", "-warmup", "2m"}, {"-sources", "0"},
		{"-sources", "257"}, {"-inflight", "0"}, {"-count", "-1"}, {"-io", "epoll"}, {"-refresh", "40s"}, {"-proto", "x"},
	} {
		var out, errb bytes.Buffer
		if rc := run(append([]string{"load"}, args...), &out, &errb); rc != 2 {
			t.Errorf("%v: exit %d, want 2", args, rc)
		}
	}
}

func TestSourceAddrs(t *testing.T) {
	v4, _ := parseTarget("127.0.0.1:1")
	if a := sourceAddr(v4, 0).String(); a != "127.0.0.2" {
		t.Errorf("source 0: %s", a)
	}
	if a := sourceAddr(v4, 15).String(); a != "127.0.0.17" {
		t.Errorf("source 15: %s", a)
	}
	if a := sourceAddr(v4, 255).String(); a != "127.0.1.1" {
		t.Errorf("source 255: %s", a)
	}
	v6, _ := parseTarget("[::1]:1")
	if a := sourceAddr(v6, 3).String(); a != "::1" {
		t.Errorf("IPv6 source: %s", a)
	}
}
