package daemon

import (
	"context"
	"encoding/json"
	"time"

	"github.com/queryd/queryd/daemon/status"
)

// statusTick samples the servers' status pages: one timer for the host
// however many servers it runs, ticking once a second. Each tick samples
// every server whose page was read in the last idleSample, or all of them
// on a host of one server, and the others once every idleSample (their
// rates are then averages over it: the list's queries/s, the sparklines
// until someone opens the page); a sampler gathers only the collectors it
// reads and encodes its /status.json only when asked, as the server list
// (/servers.json) is. 200 idle servers cost about one sample of 20
// servers a second.
type statusTick struct {
	d       *Daemon
	sampled map[*Server]time.Time // each server's last sample (the tick's goroutine only)
}

// idleSample is how often a server nobody looks at is sampled.
const idleSample = 10 * time.Second

// newStatusTick makes the host's status tick (nil when the admin listener
// is off: the page is served there).
func (d *Daemon) newStatusTick() *statusTick {
	if !d.adminOn() {
		return nil
	}
	return &statusTick{d: d, sampled: map[*Server]time.Time{}}
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
	seen := make(map[*Server]time.Time, len(servers))
	for _, s := range servers {
		if s.page == nil {
			continue
		}
		last, ok := t.sampled[s]
		if !ok || len(servers) == 1 || now.Sub(last) >= idleSample-status.Interval/2 || s.page.Viewed(now, idleSample) {
			s.page.Sample(now)
			last = now
		}
		seen[s] = last
	}
	t.sampled = seen // removed servers forgotten
}

// encodeList is /servers.json for servers and the host's down ones at now.
func (d *Daemon) encodeList(servers []*Server, now time.Time) []byte {
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
	return append(b, '\n')
}

// serversJSON is /servers.json now (each row as of its server's last
// sample).
func (d *Daemon) serversJSON() []byte { return d.encodeList(d.running(), time.Now()) }

// downError is why server name does not run (nil: it runs, or the host
// has no such server).
func (d *Daemon) downError(name string) error {
	if ds, ok := d.downServer(name); ok {
		return ds.err
	}
	return nil
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
