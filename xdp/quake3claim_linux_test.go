//go:build linux && (386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64)

package xdp

import (
	"math/rand/v2"
	"net"
	"os"
	"strings"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/queryd/queryd/quake3"
)

// TestXDPQuake3ClaimsAsGo: the program's Quake 3 claim (quake3.h's
// quake3_claim, run by the kernel in the test object's queryd_q3claim)
// takes exactly what quake3.Claims takes, which is exactly what
// ioquake3's parser reads as getinfo or getstatus: the hand-written
// spellings (whitespace of every kind, quotes, comments, case, arguments,
// line ends, the 1,023-byte line, "getinfoX") and 3,000 random ones put
// together from those pieces.
func TestXDPQuake3ClaimsAsGo(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("running the XDP program needs root (CAP_BPF): skipped")
	}
	var objs querydtestObjects
	if err := loadQuerydtestObjects(&objs, nil); err != nil {
		t.Fatal(err)
	}
	defer objs.Close()
	claims := func(p []byte) bool {
		t.Helper()
		in := frame{dstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, srcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2},
			src: cliAddr4, dst: srvAddr4, payload: p}.bytes()
		act, err := objs.QuerydQ3claim.Run(&ebpf.RunOptions{Data: in})
		if err != nil {
			t.Fatal(err)
		}
		return act == 1 // XDP_DROP: claimed
	}
	cases := q3HandSpellings()
	want := 0
	for _, c := range cases {
		if quake3.Claims([]byte(c)) {
			want++
		}
	}
	if want < len(cases)/3 || want > 2*len(cases)/3 {
		t.Fatalf("the hand cases: %d of %d claimed by quake3.Claims; the table lost its balance", want, len(cases))
	}
	rng := rand.New(rand.NewPCG(39, 6))
	for range 3000 {
		cases = append(cases, q3RandomSpelling(rng))
	}
	bad, claimed := 0, 0
	for _, c := range cases {
		p := []byte(c)
		got, want := claims(p), quake3.Claims(p)
		if want {
			claimed++
		}
		if got != want {
			bad++
			if bad <= 20 {
				t.Errorf("%q (%d bytes): the program claims %v, quake3.Claims %v", trim(c), len(p), got, want)
			}
		}
	}
	t.Logf("%d spellings, %d of them queries", len(cases), claimed)
	if bad > 0 {
		t.Errorf("%d of %d spellings claimed otherwise than quake3.Claims", bad, len(cases))
	}
}

const q3Header = "\xFF\xFF\xFF\xFF"

// q3HandSpellings are the hand-written cases, each a whole payload.
func q3HandSpellings() []string {
	out := []string{"", "\xFF\xFF\xFF", q3Header, "\xFF\xFF\xFF\xFEgetinfo", "getinfo", "\xFF\xFF\xFF\xFF\xFFgetinfo"}
	for _, s := range []string{
		"getinfo", "getstatus", "GETINFO", "GetStatus", "gEtInFo xyz", "getinfo\n", "getstatus\x00", "getinfo\r\n",
		"getinf", "getstatu", "getinfoX", "getstatusX", "getinfox abc", "getinfo2", "getstatusgetstatus",
		"getinfo abc", "getinfo\tabc", "getinfo\x01abc", "getinfo\"abc\"", "getinfo//x", "getinfo/*x*/", "getinfo/x",
		"getinfo/", "getstatus/", "getinfo%", "getinfo\x80", "getinfo\xFF",
		" getstatus", "\tgetinfo", "\r getinfo", "\x01\x02\x1f getstatus xyz", "\x0bgetinfo", "\x0cGETSTATUS",
		"\"getstatus\"", "\"getstatus", "\"GetInfo\" abc", "\"getinfo\"x", "\"getinfo x\"", "\"get info\"", "\"\"getinfo",
		"\"getinfox\"", " \"getinfo\"", "\"getinfo\n", "\"getinfo\x00\"",
		"/**/getinfo", "/*/getinfo", "/* a */ getstatus /* b */ c", "/* getinfo", "// getinfo", "/getinfo",
		"/*x*/ /*y*/getinfo", "/* x\n*/getinfo", "*/getinfo", "/ getinfo",
		"\ngetinfo", "\x00getinfo", " \n getinfo", " getinfo\n garbage", " getinfo\x00 abc", " getinfox", " getinfo2",
		" getchallenge", "getchallenge", "\xe7etinfo", " \xc7etinfo", " get%info",
		strings.Repeat(" ", 1000) + "getinfo", strings.Repeat(" ", 1016) + "getinfo", strings.Repeat(" ", 1017) + "getinfo",
		strings.Repeat(" ", 1014) + "getstatus", strings.Repeat(" ", 1015) + "getstatus", strings.Repeat(" ", 1016) + "\"getinfo",
		strings.Repeat(" ", 1015) + "\"getinfo\"", strings.Repeat(" ", 1200) + "getinfo",
		"/*" + strings.Repeat("x", 1010) + "*/getinfo", "/*" + strings.Repeat("x", 1014) + "*/getinfo",
	} {
		out = append(out, q3Header+s)
	}
	return out
}

// q3Pieces are what the random spellings are made of, around a command.
var (
	q3Lead    = []string{"", "", " ", "  ", "\t", "\r", "\x01", "\x1f", "\x0b", "/**/", "/* x */", "/*/", "//", "/*", "\n", "\x00", "\"", "*/", "/", "%", "\x80"}
	q3Words   = []string{"getinfo", "getstatus", "GETINFO", "GetStatus", "getinf", "getstatu", "getinfoX", "getstatusx", "getchallenge", "get info", "getinfo\"", "\xe7etinfo", "gEtStAtUs"}
	q3Trail   = []string{"", "", " ", "\t", "\n", "\x00", "\"", " abc", "\tabc", "//x", "/*x*/y", "/x", "/", "x", "2", "\r\n", " \"a b\" c", "%", "\x80", "*"}
	q3Padding = []int{0, 0, 0, 1, 500, 1008, 1013, 1014, 1015, 1016, 1017, 1030}
)

// q3RandomSpelling is a payload of the grammar: the header (rarely
// broken), up to three leading pieces, a word (maybe quoted), up to two
// trailing pieces; sometimes spaces pad it towards the line's limit, or
// it is cut short.
func q3RandomSpelling(rng *rand.Rand) string {
	var b strings.Builder
	if rng.IntN(40) == 0 {
		b.WriteString("\xFF\xFF\xFF\xFE")
	} else {
		b.WriteString(q3Header)
	}
	b.WriteString(strings.Repeat(" ", q3Padding[rng.IntN(len(q3Padding))]))
	for range rng.IntN(4) {
		b.WriteString(q3Lead[rng.IntN(len(q3Lead))])
	}
	quoted := rng.IntN(4) == 0
	if quoted {
		b.WriteByte('"')
	}
	b.WriteString(q3Words[rng.IntN(len(q3Words))])
	if quoted && rng.IntN(2) == 0 {
		b.WriteByte('"')
	}
	for range rng.IntN(3) {
		b.WriteString(q3Trail[rng.IntN(len(q3Trail))])
	}
	s := b.String()
	if rng.IntN(10) == 0 && len(s) > 4 {
		s = s[:4+rng.IntN(len(s)-4)]
	}
	return s
}

// trim shortens a long spelling for a message.
func trim(s string) string {
	if len(s) <= 80 {
		return s
	}
	return s[:20] + "…" + s[len(s)-50:]
}
