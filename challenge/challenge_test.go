package challenge

import (
	"net/netip"
	"testing"
	"time"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

var key = [16]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}

// The reference SipHash-2-4 vector for the 24-byte message 00 01 … 17 under
// the key 00 01 … 0f (entry 24 of the reference vectors.h; cross-checked
// with github.com/dchest/siphash, which also gives 0xa129ca6149be45e5 for
// the paper's 15-byte example).
func TestSipHashVector(t *testing.T) {
	const want uint64 = 0xb8ad50c6f649af94
	got := sipHash24(0x0706050403020100, 0x0f0e0d0c0b0a0908,
		0x0706050403020100, 0x0f0e0d0c0b0a0908, 0x1716151413121110)
	if got != want {
		t.Fatalf("sipHash24 = %#x, want %#x", got, want)
	}
}

func TestTokensBoundToIPAndEpoch(t *testing.T) {
	c := &clock{t: time.Unix(1_700_000_010, 0)}
	is := NewWithKey(key, c.now)
	a, b := netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("127.0.0.2")
	ta := is.Token(a)
	if ta == is.Token(b) {
		t.Fatal("two IPs got the same token")
	}
	if !is.Valid(a, ta) || is.Valid(b, ta) {
		t.Fatal("a token must be valid for its IP only")
	}
	if is.Token(netip.MustParseAddr("::ffff:127.0.0.1")) != ta {
		t.Fatal("an IPv4-mapped address must get the IPv4 address's token")
	}
	c.t = c.t.Add(Epoch)
	if !is.Valid(a, ta) {
		t.Fatal("the previous epoch's token must stay valid")
	}
	if is.Token(a) == ta {
		t.Fatal("a new epoch must issue a new token")
	}
	c.t = c.t.Add(Epoch)
	if is.Valid(a, ta) {
		t.Fatal("a token two epochs old must be invalid")
	}
	cur, prev := is.Tokens(a)
	if cur != is.Token(a) || !is.Valid(a, prev) {
		t.Fatal("Tokens must return the current and the previous token")
	}
}

// TestValidAs: a token in a protocol's wire form is valid for its IP in its
// epoch and the next, like Valid, and the previous epoch's token is only
// computed when the current one does not match.
func TestValidAs(t *testing.T) {
	c := &clock{t: time.Unix(1_700_000_010, 0)}
	is := NewWithKey(key, c.now)
	a, b := netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("127.0.0.2")
	calls := 0
	wire := func(tok uint32) uint32 { calls++; return tok%1000 + 100000 }
	w := wire(is.Token(a))
	calls = 0
	if !is.ValidAs(a, w, wire) || calls != 1 {
		t.Fatalf("current token: valid %v after %d mappings, want true after 1", is.ValidAs(a, w, wire), calls)
	}
	if is.ValidAs(b, w, wire) && wire(is.Token(b)) != w {
		t.Fatal("a wire token must be valid for its IP only")
	}
	if is.ValidAs(a, is.Token(a), wire) {
		t.Fatal("the unmapped token must not pass as the wire form")
	}
	c.t = c.t.Add(Epoch)
	if !is.ValidAs(a, w, wire) {
		t.Fatal("the previous epoch's wire token must stay valid")
	}
	c.t = c.t.Add(Epoch)
	if is.ValidAs(a, w, wire) && wire(is.Token(a)) != w {
		t.Fatal("a wire token two epochs old must be invalid")
	}
}

func TestKeysDiffer(t *testing.T) {
	a, _ := New(nil)
	b, _ := New(nil)
	ip := netip.MustParseAddr("::1")
	if a.Token(ip) == b.Token(ip) && a.Token(netip.MustParseAddr("127.0.0.9")) == b.Token(netip.MustParseAddr("127.0.0.9")) {
		t.Fatal("two issuers with random keys issued the same tokens")
	}
}

func TestNeverZeroOrMinusOne(t *testing.T) {
	c := &clock{t: time.Unix(0, 0)}
	is := NewWithKey(key, c.now)
	for i := 0; i < 200000; i++ {
		ip := netip.AddrFrom4([4]byte{127, byte(i >> 16), byte(i >> 8), byte(i)})
		if tok := is.Token(ip); tok == 0 || tok == 0xFFFFFFFF {
			t.Fatalf("token %#x for %s", tok, ip)
		}
	}
}

func BenchmarkValid(b *testing.B) {
	is := NewWithKey(key, nil)
	ip := netip.MustParseAddr("127.0.0.1")
	tok := is.Token(ip)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if !is.Valid(ip, tok) {
			b.Fatal("invalid")
		}
	}
}

// TestKey: an issuer made from another's Key issues the same tokens.
func TestKey(t *testing.T) {
	a, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &clock{t: time.Unix(1_700_000_010, 0)}
	a.now = c.now
	b := NewWithKey(a.Key(), c.now)
	for _, s := range []string{"127.0.0.1", "::1", "2001:db8::7"} {
		ip := netip.MustParseAddr(s)
		if a.Token(ip) != b.Token(ip) {
			t.Fatalf("%s: tokens differ", s)
		}
	}
	if EpochOf(c.t) != a.epoch(c.t) {
		t.Fatal("EpochOf differs from the issuer's epoch")
	}
}
