package responder

import (
	"errors"
	"net"
	"net/netip"
	"time"
)

var (
	_ listener = (*portableListener)(nil)
	_ Sender   = udpConnSender{}
)

// portableListener serves one address with a net.UDPConn read by several
// goroutines: the socket layer for systems without the batch path.
type portableListener struct {
	conn *net.UDPConn
}

func listenPortable(ap netip.AddrPort, cfg SocketConfig) (listener, error) {
	c, err := listenUDP(ap, cfg.RecvBuffer)
	if err != nil {
		return nil, err
	}
	return &portableListener{conn: c}, nil
}

func (l *portableListener) localAddr() netip.AddrPort {
	return l.conn.LocalAddr().(*net.UDPAddr).AddrPort()
}

func (l *portableListener) sender() Sender { return udpConnSender{l.conn} }

func (l *portableListener) close() { l.conn.Close() }

func (l *portableListener) start(set *socketSet, p pipeline) {
	for i := 0; i < set.cfg.Workers; i++ {
		set.wg.Add(1)
		go func() {
			defer set.wg.Done()
			l.serve(set, p)
		}()
	}
}

func (l *portableListener) serve(set *socketSet, p pipeline) {
	ss := p.newSession()
	buf := make([]byte, set.cfg.MaxRequest)
	oob := make([]byte, 256)
	reply := make([]byte, 0, 64)
	scratch := make([]byte, ScratchSize)
	back := l.sender()
	for {
		n, oobn, flags, src, err := l.conn.ReadMsgUDPAddrPort(buf, oob)
		if err != nil {
			if set.closed.Load() || errors.Is(err, net.ErrClosed) {
				return
			}
			ss.stats.recvErr.Add(1)
			continue
		}
		if flags&msgTrunc != 0 {
			ss.stats.trunc.Add(1)
			continue
		}
		p.beginBatch(ss, time.Now())
		src = netip.AddrPortFrom(src.Addr().Unmap(), src.Port())
		out := p.process(ss, buf[:n], scratch, src, oob[:oobn], back)
		ss.flush()
		if len(out) == 0 {
			continue
		}
		reply = replyControl(reply[:0], oob[:oobn])
		for _, d := range out {
			if _, _, err := l.conn.WriteMsgUDPAddrPort(d, reply, src); err != nil {
				ss.stats.sendErr.Add(1)
				break
			}
		}
	}
}

// udpConnSender sends through a net.UDPConn.
type udpConnSender struct{ c *net.UDPConn }

func (s udpConnSender) SendFrom(b []byte, local netip.Addr, dst netip.AddrPort) error {
	var oob []byte
	if local.IsValid() {
		oob = controlFrom(make([]byte, 0, 64), local)
	}
	_, _, err := s.c.WriteMsgUDPAddrPort(b, oob, dst)
	return err
}
