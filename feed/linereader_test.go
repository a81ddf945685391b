package feed

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

// chunks is a connection that delivers its bytes in pieces of the given
// sizes (cycling), then io.EOF; a deadline in the past makes the next Read
// time out.
type chunks struct {
	data     []byte
	sizes    []int
	i        int
	deadline time.Time
	reads    int
}

func (c *chunks) Read(p []byte) (int, error) {
	if !c.deadline.IsZero() && time.Now().After(c.deadline) {
		return 0, os.ErrDeadlineExceeded
	}
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := len(c.data)
	if len(c.sizes) > 0 {
		n = max(1, c.sizes[c.i%len(c.sizes)])
		c.i++
	}
	n = min(n, len(p), len(c.data))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	c.reads++
	return n, nil
}

func (c *chunks) SetReadDeadline(t time.Time) error { c.deadline = t; return nil }

// readAll reads lines until an error and returns them and the error.
func readAll(r *lineReader) ([]string, error) {
	var lines []string
	for {
		l, err := r.readLine()
		if err != nil {
			return lines, err
		}
		lines = append(lines, string(l))
	}
}

// TestLineReader splits malformed and awkward input into lines: pieces of
// every size, CRLF, empty lines, a last line without a newline, lines at and
// over the limit.
func TestLineReader(t *testing.T) {
	long := strings.Repeat("x", 100)
	for _, tc := range []struct {
		name  string
		in    string
		sizes []int
		max   int
		want  []string
		err   error
	}{
		{"one line", "a\n", nil, 100, []string{"a"}, io.EOF},
		{"byte by byte", "ab\ncd\n", []int{1}, 100, []string{"ab", "cd"}, io.EOF},
		{"crlf", "a\r\nb\r\r\n", []int{2}, 100, []string{"a", "b\r"}, io.EOF},
		{"empty lines", "\n\n\r\n", nil, 100, []string{"", "", ""}, io.EOF},
		{"last line without newline is dropped", "a\nhalf", []int{3}, 100, []string{"a"}, io.EOF},
		{"exactly max", long + "\n", []int{7}, 100, []string{long}, io.EOF},
		{"exactly max with cr", long[1:] + "\r\n", []int{7}, 100, []string{long[1:]}, io.EOF},
		{"max+1", long + "y\n", []int{7}, 100, nil, errLineTooLong},
		{"max+1 without newline", long + "yz", nil, 100, nil, errLineTooLong},
		{"long after short", "ok\n" + long + "yy\n", []int{50}, 100, []string{"ok"}, errLineTooLong},
		{"pipelined", "a\nb\nc\n", nil, 100, []string{"a", "b", "c"}, io.EOF},
		{"nul and invalid utf-8 pass through", "\x00\xff\n", nil, 100, []string{"\x00\xff"}, io.EOF},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &budget{max: 1 << 30}
			r := newLineReader(&chunks{data: []byte(tc.in), sizes: tc.sizes}, b, time.Hour, tc.max)
			got, err := readAll(r)
			if !errors.Is(err, tc.err) || strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Fatalf("got %q, %v; want %q, %v", got, err, tc.want, tc.err)
			}
			r.release()
			if h := b.held.Load(); h != 0 {
				t.Fatalf("budget still holds %d bytes after release", h)
			}
		})
	}
}

// TestLineReaderBudget: a line growing past the base buffer draws on the
// budget; past the budget the read fails; a finished long line gives the
// growth back before the next line is read.
func TestLineReaderBudget(t *testing.T) {
	b := &budget{max: 64 << 10}
	big := strings.Repeat("x", 40<<10)
	r := newLineReader(&chunks{data: []byte(big + "\nsmall\n")}, b, time.Hour, MaxLine)
	if l, err := r.readLine(); err != nil || len(l) != len(big) {
		t.Fatalf("40 KiB line: %d bytes, %v", len(l), err)
	}
	if h := b.held.Load(); h != 64<<10-baseBuf {
		t.Fatalf("holding a 40 KiB line: budget %d, want %d (64 KiB buffer less the base)", h, 64<<10-baseBuf)
	}
	if l, err := r.readLine(); err != nil || string(l) != "small" {
		t.Fatalf("small line: %q, %v", l, err)
	}
	if h := b.held.Load(); h != 0 {
		t.Fatalf("after the long line: budget %d, want 0", h)
	}
	r2 := newLineReader(&chunks{data: []byte(big + big + "\n")}, b, time.Hour, MaxLine)
	if _, err := r2.readLine(); !errors.Is(err, errBudget) {
		t.Fatalf("80 KiB line with a 64 KiB budget: %v, want errBudget", err)
	}
	r2.release()
	if h := b.held.Load(); h != 0 {
		t.Fatalf("after release: budget %d", h)
	}
}

// TestLineReaderDeadline: no deadline while idle between lines; one from
// the first byte of a line, not renewed by later pieces of it.
func TestLineReaderDeadline(t *testing.T) {
	c := &chunks{data: []byte("a\nbcd"), sizes: []int{2, 1}}
	r := newLineReader(c, &budget{max: 1 << 20}, time.Hour, 100)
	if l, err := r.readLine(); err != nil || string(l) != "a" {
		t.Fatal(l, err)
	}
	if !c.deadline.IsZero() {
		t.Fatal("a deadline while no line has begun")
	}
	c.sizes = []int{1}
	_, err := r.readLine() // reads "b", "c", "d", then EOF
	if !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	first := c.deadline
	if first.IsZero() || time.Until(first) < 59*time.Minute {
		t.Fatalf("deadline %v for a line in progress, want about an hour from its first byte", first)
	}
	r2 := newLineReader(&chunks{data: []byte("ab\n"), sizes: []int{1}}, &budget{max: 1 << 20}, time.Nanosecond, 100)
	if _, err := r2.readLine(); !errors.Is(err, errLineTimeout) {
		t.Fatalf("a line slower than its timeout: %v, want errLineTimeout", err)
	}
}

// FuzzLineReader: whatever the bytes and however they are cut, the reader
// returns the same lines as splitting the whole input at newlines.
func FuzzLineReader(f *testing.F) {
	f.Add([]byte("a\nb\r\n\n"), uint8(1), uint8(3))
	f.Add([]byte(strings.Repeat("x", 70)+"\n"+strings.Repeat("y", 300)), uint8(5), uint8(64))
	f.Add([]byte("\r\n\r\r\n\x00\xff\n"), uint8(2), uint8(2))
	f.Fuzz(func(t *testing.T, in []byte, size1, size2 uint8) {
		const max = 256
		r := newLineReader(&chunks{data: bytes.Clone(in), sizes: []int{int(size1), int(size2)}}, &budget{max: 1 << 20}, time.Hour, max)
		got, err := readAll(r)
		var want []string
		rest := in
		wantErr := io.EOF
		for {
			i := bytes.IndexByte(rest, '\n')
			if i < 0 {
				if len(rest) > max {
					wantErr = errLineTooLong
				}
				break
			}
			if i > max {
				wantErr = errLineTooLong
				break
			}
			want = append(want, string(bytes.TrimSuffix(rest[:i], []byte("\r"))))
			rest = rest[i+1:]
		}
		if !errors.Is(err, wantErr) || strings.Join(got, "\n") != strings.Join(want, "\n") || len(got) != len(want) {
			t.Fatalf("got %q, %v; want %q, %v", got, err, want, wantErr)
		}
	})
}
