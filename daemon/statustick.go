package daemon

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"time"

	"github.com/queryd/queryd/daemon/status"
)

// statusTick samples every server's status page once a second: one timer
// for the host however many servers it runs, one gather of the registry
// split by server, then each server's sampler (which encodes its
// /status.json only when asked) and the server list (/servers.json).
type statusTick struct {
	d    *Daemon
	list atomic.Pointer[[]byte] // /servers.json as of the last tick
}

// newStatusTick makes the host's status tick (nil when the admin listener
// is off: the page is served there).
func (d *Daemon) newStatusTick() *statusTick {
	if !d.adminOn() {
		return nil
	}
	return &statusTick{d: d}
}

// Name is the part's name in logs.
func (t *statusTick) Name() string { return "status" }

// Serve samples at once and then every status.Interval until ctx is done.
func (t *statusTick) Serve(ctx context.Context) error {
	if ctx.Err() != nil {
		return nil // never started
	}
	tk := time.NewTicker(status.Interval)
	defer tk.Stop()
	t.sample(time.Now())
	for {
		select {
		case <-ctx.Done():
			return nil
		case now := <-tk.C:
			t.sample(now)
		}
	}
}

// sample takes one sample of every running server at now.
func (t *statusTick) sample(now time.Time) {
	servers := t.d.running()
	mfs, err := t.d.reg.Gather()
	split := splitByServer(mfs)
	for _, s := range servers {
		if s.page == nil {
			continue
		}
		s.gather = tickGatherer{mfs: split[s.name], err: err}
		s.page.Sample(now)
	}
	t.list.Store(t.d.encodeList(servers, now))
}

// encodeList is /servers.json for servers and the host's down ones at now.
func (d *Daemon) encodeList(servers []*Server, now time.Time) *[]byte {
	l := status.ServerList{Schema: status.SchemaVersion, Now: now.UTC(), Servers: []status.Row{}}
	for _, s := range servers {
		if s.page != nil {
			l.Servers = append(l.Servers, s.page.Row(s.name, now))
		}
	}
	for _, ds := range d.downServers() {
		l.Servers = append(l.Servers, status.Down(ds.name, ds.err))
	}
	b, _ := json.Marshal(l)
	b = append(b, '\n')
	return &b
}

// serversJSON is /servers.json as of the last tick.
func (d *Daemon) serversJSON() []byte {
	if d.tick != nil {
		if b := d.tick.list.Load(); b != nil {
			return *b
		}
	}
	return *d.encodeList(d.running(), time.Now())
}

// sampler is server name's status sampler ("": the first server's; nil
// when the host runs no such server).
func (d *Daemon) sampler(name string) *status.Sampler {
	s := d.first()
	if name != "" {
		s = d.Server(name)
	}
	if s == nil {
		return nil
	}
	return s.page
}

var _ part = (*statusTick)(nil)
