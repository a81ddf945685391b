//go:build linux

package responder

import (
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// replies is a send batch: the reply messages of the datagrams a receive
// loop answered, each to its request's source, with their datagrams and
// control data; the batch layer sends them with one sendmmsg, the uring
// layer with one SQE each.
type replies struct {
	smsgs [sendCap]mmsghdr
	sgso  [sendCap]bool              // smsgs[i] is a GSO message
	sctrl [sendCap][replyCtrlSz]byte // a GSO message's control data
	siovs [sendIovCap]unix.Iovec
	ns    int // messages queued
	niov  int // datagrams queued
	gso   *atomic.Bool
}

// replySink sends a full send batch, which it empties.
type replySink interface {
	flushReplies(ss *session)
}

// queueAnswer queues the datagrams of one answer to the source name (a
// sockaddr of namelen bytes, valid until the batch is sent), with control
// data rc; runs of equal-sized datagrams leave as GSO messages when the
// address sends with GSO. A full batch is handed to sink first.
func (q *replies) queueAnswer(sink replySink, ss *session, out [][]byte, name *byte, namelen uint32, rc []byte) {
	gso := q.gso.Load()
	for len(out) > 0 {
		if gso {
			if n, seg := gsoRun(out); n > 0 {
				q.addMsg(sink, ss, name, namelen, rc, n, seg)
				for _, d := range out[:n] {
					q.addIov(d)
				}
				ss.stats.gsoSends.Add(1)
				out = out[n:]
				continue
			}
		}
		if len(out[0]) > 0 {
			q.addMsg(sink, ss, name, namelen, rc, 1, 0)
			q.addIov(out[0])
		}
		out = out[1:]
	}
}

// addMsg starts a message of n datagrams to name, with control data rc,
// plus a UDP_SEGMENT control message when seg > 0 (in the message's own
// control buffer: one answer may make several GSO messages); addIov then
// adds its datagrams.
func (q *replies) addMsg(sink replySink, ss *session, name *byte, namelen uint32, rc []byte, n, seg int) {
	if q.ns == sendCap || q.niov+n > sendIovCap {
		sink.flushReplies(ss)
	}
	if seg > 0 {
		rc = appendSegment(append(q.sctrl[q.ns][:0], rc...), seg)
	}
	sm := &q.smsgs[q.ns].hdr
	sm.Name = name
	sm.Namelen = namelen
	sm.Iov = &q.siovs[q.niov]
	sm.SetIovlen(n)
	if len(rc) > 0 {
		sm.Control = &rc[0]
		sm.SetControllen(len(rc))
	} else {
		sm.Control = nil
		sm.SetControllen(0)
	}
	q.sgso[q.ns] = seg > 0
	q.ns++
}

// addIov adds datagram d to the message addMsg started.
func (q *replies) addIov(d []byte) {
	q.siovs[q.niov].Base = &d[0]
	q.siovs[q.niov].SetLen(len(d))
	q.niov++
}
