package relay

import (
	"math"
	"math/rand/v2"
	"net/netip"
)

// siteKey is a site: an IPv4 /24, or an IPv6 /56 or /48 (bits tells them
// apart), whose sessions together are capped at a share of MaxSessions.
type siteKey struct {
	addr [16]byte
	bits uint8
}

// site is one site's sessions; each holds its index in sessions.
type site struct {
	sessions []*session
}

// siteRef is a session's place in one site.
type siteRef struct {
	st  *site
	idx int
}

// siteCaps are the sessions one site may hold (0: no cap for that size).
type siteCaps struct{ v4x24, v6x56, v6x48 int }

// newSiteCaps turns cfg's shares into counts: at least MaxPerIP (a site
// holds at least what one of its sources may), at most MaxSessions. cfg
// has its defaults.
func newSiteCaps(cfg Config) siteCaps {
	n := func(share float64) int {
		if share <= 0 {
			return 0
		}
		return min(cfg.MaxSessions, max(cfg.MaxPerIP, int(math.Ceil(share*float64(cfg.MaxSessions)))))
	}
	return siteCaps{n(cfg.Share24), n(cfg.Share56), n(cfg.Share48)}
}

// siteKeys returns ip's sites that have a cap, smallest first (an IPv6 /56
// lies inside its /48), with their caps.
func (c siteCaps) siteKeys(ip netip.Addr) (keys [2]siteKey, caps [2]int, n int) {
	ip = ip.Unmap()
	add := func(bits, limit int) {
		if limit > 0 {
			p, _ := ip.Prefix(bits)
			keys[n], caps[n] = siteKey{p.Addr().As16(), uint8(bits)}, limit
			n++
		}
	}
	if ip.Is4() {
		add(24, c.v4x24)
	} else {
		add(56, c.v6x56)
		add(48, c.v6x48)
	}
	return keys, caps, n
}

// siteRoom checks ip's sites: when one holds its cap it returns the site's
// session to evict (the idlest evictable of a sample), or false when none
// may go; r.mu is held.
func (r *Relay) siteRoom(ip netip.Addr, now int64) (*session, bool) {
	keys, caps, n := r.caps.siteKeys(ip)
	for i := range n {
		st := r.sites[keys[i]]
		if st == nil || len(st.sessions) < caps[i] {
			continue
		}
		v := r.sampleSite(st, now)
		return v, v != nil // the smaller site's victim is in the larger one too
	}
	return nil, true
}

// sampleSite returns the idlest evictable of up to evictSample sessions of
// st picked at random.
func (r *Relay) sampleSite(st *site, now int64) *session {
	if len(st.sessions) <= evictSample {
		return r.idlestEvictable(st.sessions, len(st.sessions), now)
	}
	var idlest *session
	for range evictSample {
		s := st.sessions[rand.IntN(len(st.sessions))]
		if r.evictable(s, now) && (idlest == nil || s.last.Load() < idlest.last.Load()) {
			idlest = s
		}
	}
	return idlest
}

// addToSites counts s in its client's sites; r.mu is held.
func (r *Relay) addToSites(s *session) {
	keys, _, n := r.caps.siteKeys(s.client.Addr())
	for i := range n {
		st := r.sites[keys[i]]
		if st == nil {
			st = &site{}
			r.sites[keys[i]] = st
		}
		s.sites[i] = siteRef{st, len(st.sessions)}
		st.sessions = append(st.sessions, s)
	}
}

// removeFromSites takes s out of its sites, dropping the sites left empty;
// r.mu is held.
func (r *Relay) removeFromSites(s *session) {
	keys, _, n := r.caps.siteKeys(s.client.Addr())
	for i := range n {
		ref := s.sites[i]
		if ref.st == nil {
			continue
		}
		st, last := ref.st, len(ref.st.sessions)-1
		moved := st.sessions[last]
		st.sessions[ref.idx] = moved
		for j := range moved.sites {
			if moved.sites[j].st == st {
				moved.sites[j].idx = ref.idx
			}
		}
		st.sessions[last] = nil
		st.sessions = st.sessions[:last]
		if len(st.sessions) == 0 {
			delete(r.sites, keys[i])
		}
		s.sites[i] = siteRef{}
	}
}
