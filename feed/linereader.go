package feed

import (
	"bytes"
	"errors"
	"io"
	"os"
	"time"
)

// baseBuf is the read buffer every connection holds; a line longer than
// this grows the buffer, and the growth is charged to the shared budget.
const baseBuf = 4 << 10

var (
	errLineTooLong = errors.New("line too long")
	errLineTimeout = errors.New("line not completed in time")
	errBudget      = errors.New("feed buffers full")
)

// deadlineReader is the part of a net.Conn a lineReader uses.
type deadlineReader interface {
	io.Reader
	SetReadDeadline(time.Time) error
}

// lineReader splits one connection's bytes into lines. Its buffer grows
// with the line in progress (beyond baseBuf, charged to budget) and shrinks
// back once that line is done, so an idle connection holds baseBuf bytes. A
// line that has begun must end within timeout; between lines a connection
// may stay idle as long as it likes.
type lineReader struct {
	conn    deadlineReader
	budget  *budget
	timeout time.Duration
	max     int // longest line without its newline

	buf        []byte // buf[start:end] is read but not yet returned
	start, end int
	armed      bool // the connection has a read deadline
	timed      bool // the deadline is for the line in progress
}

func newLineReader(c deadlineReader, b *budget, timeout time.Duration, max int) *lineReader {
	return &lineReader{conn: c, budget: b, timeout: timeout, max: max}
}

// readLine returns the next line without its newline (and a trailing \r).
// The line is valid until the next call. A final line without a newline is
// never returned: the writer went away mid-message.
func (r *lineReader) readLine() ([]byte, error) {
	r.shrink()
	scanned := 0 // bytes of buf[start:end] known to hold no newline
	for {
		if i := bytes.IndexByte(r.buf[r.start+scanned:r.end], '\n'); i >= 0 {
			n := scanned + i
			if n > r.max {
				return nil, errLineTooLong
			}
			line := r.buf[r.start : r.start+n]
			r.start += n + 1
			r.timed = false // what follows is the next line
			return bytes.TrimSuffix(line, []byte("\r")), nil
		}
		scanned = r.end - r.start
		if scanned > r.max {
			return nil, errLineTooLong
		}
		if err := r.fill(); err != nil {
			return nil, err
		}
	}
}

// hasLine reports whether a whole line is read and waiting to be returned.
func (r *lineReader) hasLine() bool {
	return bytes.IndexByte(r.buf[r.start:r.end], '\n') >= 0
}

// fill reads more bytes, making room first.
func (r *lineReader) fill() error {
	if err := r.deadline(); err != nil {
		return err
	}
	if r.start > 0 {
		r.end = copy(r.buf, r.buf[r.start:r.end])
		r.start = 0
	}
	if r.end == len(r.buf) {
		if err := r.grow(); err != nil {
			return err
		}
	}
	n, err := r.conn.Read(r.buf[r.end:])
	r.end += n
	switch {
	case n > 0:
		return nil
	case errors.Is(err, os.ErrDeadlineExceeded):
		return errLineTimeout
	}
	return err
}

// deadline starts the line timeout when part of a line is waiting for the
// rest, and lifts it when the connection is between lines.
func (r *lineReader) deadline() error {
	pending := r.end > r.start
	switch {
	case pending && !r.timed:
		r.timed, r.armed = true, true
		return r.conn.SetReadDeadline(time.Now().Add(r.timeout))
	case !pending && r.armed:
		r.armed = false
		return r.conn.SetReadDeadline(time.Time{})
	}
	return nil
}

// grow doubles the buffer, up to one longest line and its newline,
// charging the growth beyond baseBuf to the budget.
func (r *lineReader) grow() error {
	if len(r.buf) == 0 {
		r.buf = make([]byte, min(baseBuf, r.max+1))
		return nil
	}
	size := min(2*len(r.buf), r.max+1)
	if !r.budget.take(int64(size - len(r.buf))) {
		return errBudget
	}
	nb := make([]byte, size)
	copy(nb, r.buf[r.start:r.end])
	r.buf, r.end, r.start = nb, r.end-r.start, 0
	return nil
}

// shrink drops a grown buffer, and its charge, once what it holds fits the
// base size again.
func (r *lineReader) shrink() {
	if len(r.buf) <= baseBuf || r.end-r.start > baseBuf {
		return
	}
	r.budget.give(int64(len(r.buf) - baseBuf))
	nb := make([]byte, baseBuf)
	r.end, r.start = copy(nb, r.buf[r.start:r.end]), 0
	r.buf = nb
}

// release returns the buffer's charge; the reader is not used afterwards.
func (r *lineReader) release() {
	if len(r.buf) > baseBuf {
		r.budget.give(int64(len(r.buf) - baseBuf))
	}
	r.buf, r.start, r.end = nil, 0, 0
}
