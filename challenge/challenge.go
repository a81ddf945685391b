// Package challenge issues and checks stateless, address-bound challenge
// tokens shared by every protocol. A token is a SipHash-2-4 of the client's IP
// address and the current 30-second epoch under a random key made at start;
// the current and the previous epoch's tokens are valid, so a token lives
// between 30 and 60 seconds, and nothing is stored per client.
package challenge

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"net/netip"
	"time"
)

// Epoch is how long one generation of tokens is issued for.
const Epoch = 30 * time.Second

// Issuer makes and checks tokens. It is safe for concurrent use and never
// changes after New.
type Issuer struct {
	k0, k1 uint64
	now    func() time.Time
}

// New makes an issuer with a fresh random key. now is the clock (time.Now when
// nil); tests pass their own.
func New(now func() time.Time) (*Issuer, error) {
	var key [16]byte
	if _, err := rand.Read(key[:]); err != nil {
		return nil, fmt.Errorf("challenge key: %w", err)
	}
	return NewWithKey(key, now), nil
}

// NewWithKey makes an issuer with a given key (for tests and benchmarks).
func NewWithKey(key [16]byte, now func() time.Time) *Issuer {
	if now == nil {
		now = time.Now
	}
	return &Issuer{
		k0:  binary.LittleEndian.Uint64(key[:8]),
		k1:  binary.LittleEndian.Uint64(key[8:]),
		now: now,
	}
}

// Token returns the current token for ip. It is never 0 nor 0xFFFFFFFF (-1).
func (is *Issuer) Token(ip netip.Addr) uint32 {
	return is.token(ip, is.epoch(is.now()))
}

// Tokens returns the current and the previous epoch's tokens for ip: the two
// a client may present. Protocols that map tokens into their own wire form
// map both and compare.
func (is *Issuer) Tokens(ip netip.Addr) (cur, prev uint32) {
	e := is.epoch(is.now())
	return is.token(ip, e), is.token(ip, e-1)
}

// Valid reports whether tok is ip's current or previous token.
func (is *Issuer) Valid(ip netip.Addr, tok uint32) bool {
	e := is.epoch(is.now())
	return tok == is.token(ip, e) || tok == is.token(ip, e-1)
}

// ValidAs reports whether tok is ip's current or previous token in a
// protocol's wire form, wire being the mapping into it. The previous token
// is computed only when the current one does not match.
func (is *Issuer) ValidAs(ip netip.Addr, tok uint32, wire func(uint32) uint32) bool {
	e := is.epoch(is.now())
	return tok == wire(is.token(ip, e)) || tok == wire(is.token(ip, e-1))
}

// Key returns the issuer's SipHash key, for a token check that runs outside
// this process's code (the XDP fast path computes the same tokens in the
// kernel). Keep it secret: it is what makes tokens unforgeable.
func (is *Issuer) Key() [16]byte {
	var k [16]byte
	binary.LittleEndian.PutUint64(k[:8], is.k0)
	binary.LittleEndian.PutUint64(k[8:], is.k1)
	return k
}

// EpochOf returns the token epoch of t: its Unix time in nanoseconds over
// Epoch, the number a token is hashed with.
func EpochOf(t time.Time) uint64 { return uint64(t.UnixNano() / int64(Epoch)) }

func (is *Issuer) epoch(t time.Time) uint64 {
	return uint64(t.UnixNano() / int64(Epoch))
}

func (is *Issuer) token(ip netip.Addr, epoch uint64) uint32 {
	a := ip.Unmap().As16() // IPv4 and IPv4-mapped IPv6 are one client
	h := sipHash24(is.k0, is.k1,
		binary.LittleEndian.Uint64(a[:8]),
		binary.LittleEndian.Uint64(a[8:]),
		epoch)
	t := uint32(h) ^ uint32(h>>32)
	if t == 0 || t == 0xFFFFFFFF {
		t = 0x5A5A5A5A
	}
	return t
}
