package agones

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// readAll reads every line of in with a reader of max, returning each line
// or "ERR:too long", and the final error.
func readAll(in io.Reader, max int) ([]string, *lineReader, error) {
	r := newLineReader(in, max, nil)
	var out []string
	for {
		line, err := r.next()
		switch {
		case errors.Is(err, errTooLong):
			out = append(out, "ERR:too long")
		case err != nil:
			return out, r, err
		default:
			out = append(out, string(line))
		}
	}
}

func TestLineReader(t *testing.T) {
	for _, c := range []struct {
		name, in string
		max      int
		want     []string
	}{
		{"lines", "a\nbc\n\nd\n", 10, []string{"a", "bc", "", "d"}},
		{"crlf", "a\r\nb\r\n", 10, []string{"a", "b"}},
		{"no final newline: not a line", "a\nb", 10, []string{"a"}},
		{"exactly max", "abcd\nx\n", 4, []string{"abcd", "x"}},
		{"one past max, newline in the same read", "abcde\nx\n", 4, []string{"ERR:too long", "x"}},
		{"long line skipped, the next read", "abcdefghij\nxy\n", 4, []string{"ERR:too long", "xy"}},
		{"two long lines", "abcdefghij\nklmnopqrstuv\nz\n", 4, []string{"ERR:too long", "ERR:too long", "z"}},
		{"long line never ends", "abcdefghij", 4, []string{"ERR:too long"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, rd := range []struct {
				name string
				r    io.Reader
			}{{"whole", strings.NewReader(c.in)}, {"byte by byte", iotest.OneByteReader(strings.NewReader(c.in))}} {
				got, _, err := readAll(rd.r, c.max)
				if err != io.EOF {
					t.Errorf("%s: final error %v, want EOF", rd.name, err)
				}
				if strings.Join(got, "|") != strings.Join(c.want, "|") {
					t.Errorf("%s: got %q, want %q", rd.name, got, c.want)
				}
			}
		})
	}
}

// TestLineReaderBounded: a 10 MiB line costs the reader at most max+1
// bytes of buffer, and the buffer shrinks back to baseBuf after it.
func TestLineReaderBounded(t *testing.T) {
	const max = 1 << 20
	in := io.MultiReader(strings.NewReader("short\n"), bytes.NewReader(bytes.Repeat([]byte("x"), 10<<20)), strings.NewReader("\nafter\n"))
	got, r, _ := readAll(in, max)
	if strings.Join(got, "|") != "short|ERR:too long|after" {
		t.Fatalf("got %q", got)
	}
	if r.peak > max+1 {
		t.Errorf("buffer peak %d bytes for a 10 MiB line, want at most %d", r.peak, max+1)
	}
	if len(r.buf) > baseBuf {
		t.Errorf("buffer still %d bytes after the long line", len(r.buf))
	}
}

// TestLineReaderPending: pending is told when part of a line waits (the
// watcher's line timeout runs then), and when none does.
func TestLineReaderPending(t *testing.T) {
	var events []bool
	r := newLineReader(iotest.OneByteReader(strings.NewReader("ab\ncd\nefghijk")), 3, func(w bool) { events = append(events, w) })
	for {
		if _, err := r.next(); err != nil && !errors.Is(err, errTooLong) {
			break
		}
	}
	want := []bool{true, false, true, false, true}
	if len(events) != len(want) {
		t.Fatalf("pending told %v, want %v", events, want)
	}
	for i := range want {
		if events[i] != want[i] {
			t.Fatalf("pending told %v, want %v", events, want)
		}
	}
}
