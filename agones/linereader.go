package agones

import (
	"bytes"
	"errors"
	"io"
)

// MaxLine is the longest line of the watch stream, and the longest answer
// to GET /gameserver, that queryd reads: 1 MiB. A GameServer is far
// smaller (Kubernetes caps all of an object's annotations at 256 KiB
// together, and a List at 1,000 values). A longer line is counted
// (ReasonTooLong) and skipped as it arrives: the stream's memory stays
// under MaxLine plus a few KiB, however long the line.
const MaxLine = 1 << 20

// baseBuf is the line buffer a stream holds while its lines are short; a
// longer line grows it (doubling, up to MaxLine+1) and it shrinks back
// once that line is done.
const baseBuf = 4 << 10

// errTooLong is a line longer than the reader's max: it is refused, and
// the rest of it is skipped as it comes.
var errTooLong = errors.New("line too long")

// lineReader splits a stream into lines without ever holding more than
// max+1 bytes of one: a line past max is refused once (errTooLong) and its
// remaining bytes are dropped as they are read, up to its newline.
// pending, when set, is told each time part of a line starts or stops
// waiting for the rest (the watcher's line timeout).
type lineReader struct {
	r       io.Reader
	max     int
	pending func(bool)

	buf        []byte // buf[start:end] is read but not yet returned
	start, end int
	skipping   bool // the line in progress is refused: drop it up to its newline
	waiting    bool // what pending was last told
	peak       int  // the largest buffer held (the reader's accounting, for tests)
}

func newLineReader(r io.Reader, max int, pending func(bool)) *lineReader {
	return &lineReader{r: r, max: max, pending: pending}
}

// next returns the next line without its newline (and a trailing \r),
// valid until the next call; or errTooLong for a line longer than max,
// once, when its max+1st byte is read; or the stream's error. A last line
// without a newline is never returned.
func (r *lineReader) next() ([]byte, error) {
	r.shrink()
	scanned := 0 // bytes of buf[start:end] known to hold no newline
	for {
		if i := bytes.IndexByte(r.buf[r.start+scanned:r.end], '\n'); i >= 0 {
			n := scanned + i
			line := r.buf[r.start : r.start+n]
			r.start += n + 1
			scanned = 0
			if r.skipping { // the end of a line already refused
				r.skipping = false
				continue
			}
			r.wait(r.end > r.start)
			if n > r.max {
				return nil, errTooLong
			}
			return bytes.TrimSuffix(line, []byte("\r")), nil
		}
		if r.skipping {
			r.start, r.end, scanned = 0, 0, 0
		} else if scanned = r.end - r.start; scanned > r.max {
			r.start, r.end, scanned = 0, 0, 0
			r.skipping = true
			r.wait(true)
			return nil, errTooLong
		}
		r.wait(r.skipping || r.end > r.start)
		if err := r.fill(); err != nil {
			return nil, err
		}
	}
}

// wait tells pending when part of a line starts or stops waiting.
func (r *lineReader) wait(w bool) {
	if w != r.waiting {
		r.waiting = w
		if r.pending != nil {
			r.pending(w)
		}
	}
}

// fill reads more bytes, making room first.
func (r *lineReader) fill() error {
	if r.start > 0 {
		r.end = copy(r.buf, r.buf[r.start:r.end])
		r.start = 0
	}
	if r.end == len(r.buf) {
		r.grow()
	}
	n, err := r.r.Read(r.buf[r.end:])
	r.end += n
	if n > 0 || err == nil {
		return nil // an error with bytes comes again on the next read
	}
	return err
}

// grow doubles the buffer, up to one longest line and its newline.
func (r *lineReader) grow() {
	size := min(baseBuf, r.max+1)
	if len(r.buf) > 0 {
		size = min(2*len(r.buf), r.max+1)
	}
	nb := make([]byte, size)
	r.end = copy(nb, r.buf[r.start:r.end])
	r.buf, r.start = nb, 0
	r.peak = max(r.peak, size)
}

// shrink drops a grown buffer once what it holds fits the base size.
func (r *lineReader) shrink() {
	if len(r.buf) <= baseBuf || r.end-r.start > baseBuf {
		return
	}
	nb := make([]byte, baseBuf)
	r.end, r.start = copy(nb, r.buf[r.start:r.end]), 0
	r.buf = nb
}
