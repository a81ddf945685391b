package state

import (
	"cmp"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Store holds the current Snapshot and makes new ones from three layers of
// top-level fields, each over the one before: the config's base document
// ([server]), the game server's (its last answer to [upstream]'s poll, or
// its Agones GameServer; empty without either), and the feed's changes. Readers
// call Snapshot (one atomic load); writers are serialized. A rejected change
// leaves everything as it was.
type Store struct {
	mu    sync.Mutex
	cur   atomic.Pointer[Snapshot]
	base  map[string]any // [server] from the config
	game  map[string]any // top-level fields of the game server's layer (SetGameServer)
	layer map[string]any // top-level fields the feed has set
	seen  map[uint32]seenPlayer
	seq   uint64
	subs  map[int]func(*Snapshot)
	subID int
	now   func() time.Time
	// asleep: the server's game server is stopped on purpose ([sleep]):
	// every snapshot has no players (SetAsleep).
	asleep bool
}

type seenPlayer struct {
	seq   uint64    // first-seen order
	since time.Time // connected since
	time  string    // the "time" it was last given, "" when none
}

// NewStore makes a store whose first snapshot (version 1) is base. now is the
// clock (time.Now when nil).
func NewStore(base map[string]any, now func() time.Time) (*Store, error) {
	if now == nil {
		now = time.Now
	}
	s := &Store{base: base, game: map[string]any{}, layer: map[string]any{}, seen: map[uint32]seenPlayer{}, subs: map[int]func(*Snapshot){}, now: now}
	if s.base == nil {
		s.base = map[string]any{}
	}
	if err := CheckDepth(s.base); err != nil {
		return nil, err
	}
	if _, err := s.commit(s.base, s.game, s.layer); err != nil {
		return nil, err
	}
	return s, nil
}

// Snapshot returns the current snapshot. It never returns nil.
func (s *Store) Snapshot() *Snapshot { return s.cur.Load() }

// Subscribe registers fn to be called with every new snapshot, in order, and
// calls it at once with the current one. fn runs while the store is locked:
// it must be quick (encode replies) and must not call back into the Store.
// The returned function cancels the subscription.
func (s *Store) Subscribe(fn func(*Snapshot)) (cancel func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.subID++
	id := s.subID
	s.subs[id] = fn
	fn(s.cur.Load())
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.subs, id)
	}
}

// Result is what an accepted change made: the new snapshot's version and
// the warnings about the values that were fitted to the limits on the way
// (text cut to its length), in the order of their paths.
type Result struct {
	Version  uint64
	Warnings []Warning
}

// Replace makes doc the whole feed-set document: absent fields fall back to
// the game server's and then the base, and absent "players" means no players.
// It is Put without the warnings.
func (s *Store) Replace(doc map[string]any) (uint64, error) {
	r, err := s.Put(doc)
	return r.Version, err
}

// Put is Replace, returning the Result.
func (s *Store) Put(doc map[string]any) (Result, error) {
	if err := CheckDepth(doc); err != nil {
		return Result{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.commit(s.base, s.game, wholeLayer(doc))
}

// SetGameServer makes doc the game server's whole document (its last
// answer to [upstream]'s poll, or its Agones GameServer, mapped): it sits
// over the base and under the feed's fields, absent fields fall back to
// the base, and absent "players" means no players. A rejected doc changes
// nothing.
func (s *Store) SetGameServer(doc map[string]any) (uint64, error) {
	if err := CheckDepth(doc); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.commit(s.base, wholeLayer(doc), s.layer)
	return r.Version, err
}

// wholeLayer is doc as a layer of a whole document: without its null
// fields, with "players" ({} when absent).
func wholeLayer(doc map[string]any) map[string]any {
	layer := make(map[string]any, len(doc)+1)
	for k, v := range doc {
		if v != nil {
			layer[k] = v
		}
	}
	if _, ok := layer["players"]; !ok {
		layer["players"] = map[string]any{}
	}
	return layer
}

// Patch applies an RFC 7386 merge patch to the current document. A top-level
// field the patch removes falls back to the game server's and then the base
// ("players" becomes empty). A field the patch touches is the feed's from
// then on, whole: patching one player takes the whole player list over from
// the game server's layer. It is Merge without the warnings.
func (s *Store) Patch(patch map[string]any) (uint64, error) {
	r, err := s.Merge(patch)
	return r.Version, err
}

// Merge is Patch, returning the Result.
func (s *Store) Merge(patch map[string]any) (Result, error) {
	if err := CheckDepth(patch); err != nil {
		return Result{}, err // before MergePatch, which recurses as deep as the patch
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := s.cur.Load().doc
	patched, _ := MergePatch(cur, patch).(map[string]any)
	layer := make(map[string]any, len(s.layer)+len(patch))
	for k, v := range s.layer {
		layer[k] = v
	}
	for k := range patch {
		if v, ok := patched[k]; ok {
			layer[k] = v
		} else if k == "players" {
			layer[k] = map[string]any{}
		} else {
			delete(layer, k)
		}
	}
	return s.commit(s.base, s.game, layer)
}

// SetBase replaces the base document (the config's [server] after a reload);
// fields the game server or the feed has set keep their values.
func (s *Store) SetBase(base map[string]any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if base == nil {
		base = map[string]any{}
	}
	if err := CheckDepth(base); err != nil {
		return err
	}
	_, err := s.commit(base, s.game, s.layer)
	return err
}

// SetAsleep says whether the server's game server is asleep (stopped on
// purpose, [sleep]): while it is, every snapshot has no players, whatever
// the layers hold, and every other field as they make it (the last state
// the game had: its name, map and rules). The layers are kept: their
// players come back, as the sources last gave them, when it wakes. A call
// that changes nothing makes no snapshot.
func (s *Store) SetAsleep(asleep bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.asleep == asleep {
		return nil
	}
	s.asleep = asleep
	if _, err := s.commit(s.base, s.game, s.layer); err != nil {
		s.asleep = !asleep
		return err
	}
	return nil
}

// Validate reports whether doc would be accepted as a whole document, without
// changing anything.
func Validate(doc map[string]any) error {
	if err := CheckDepth(doc); err != nil {
		return err
	}
	_, err := decodeDocument(doc, &Snapshot{})
	return err
}

// ValidateAll is Validate reporting every top-level field that is wrong
// (each field's first error), for `queryd check`; nil when doc is valid.
func ValidateAll(doc map[string]any) []error {
	errs, _ := Check(doc)
	return errs
}

// Check is ValidateAll that also returns the warnings a Store would give
// for doc's valid fields (text it would cut), in the order of their paths.
func Check(doc map[string]any) ([]error, []Warning) {
	if err := CheckDepth(doc); err != nil {
		return []error{err}, nil
	}
	errs, fixes := decodeFields(doc, &Snapshot{}, 0)
	return errs, warnings(fixes)
}

// commit builds and publishes the snapshot of base overlaid by up and then
// by layer, or changes nothing and returns the reason. Values accepted in
// another form than given (fixes: integral floats, unknown pings, cut text)
// are kept in that form, in the snapshot's document and in the layer that
// set them, so that a later change does not warn about them again. Callers
// hold mu.
func (s *Store) commit(base, up, layer map[string]any) (Result, error) {
	eff := make(map[string]any, len(base)+len(up)+len(layer))
	for _, m := range []map[string]any{base, up, layer} {
		for k, v := range m {
			eff[k] = v
		}
	}
	if s.asleep {
		eff["players"] = map[string]any{}
	}
	snap := &Snapshot{}
	fixes, err := decodeDocument(eff, snap)
	if err != nil {
		return Result{}, err
	}
	if len(fixes) > 0 {
		eff = applyFixes(eff, fixes)
		base, up, layer = refit(eff, fixes, base, up, layer)
	}
	snap.doc = eff
	now := s.now()
	seen, seq, err := s.placePlayers(snap, eff, now)
	if err != nil {
		return Result{}, err
	}
	snap.Made = now
	if prev := s.cur.Load(); prev != nil {
		snap.Version = prev.Version + 1
	} else {
		snap.Version = 1
	}
	s.base, s.game, s.layer, s.seen, s.seq = base, up, layer, seen, seq
	s.cur.Store(snap)
	for _, fn := range s.subs {
		fn(snap)
	}
	return Result{Version: snap.Version, Warnings: warnings(fixes)}, nil
}

// refit puts the fixed top-level fields of eff into the layers they came
// from (the top one that has each), copying a layer before changing it.
func refit(eff map[string]any, fixes []fix, base, up, layer map[string]any) (b, u, l map[string]any) {
	layers := [3]map[string]any{layer, up, base}
	var copied [3]bool
	for _, f := range fixes {
		k := f.path[0]
		for i, m := range layers {
			if _, ok := m[k]; !ok {
				continue
			}
			if !copied[i] {
				layers[i], copied[i] = maps.Clone(m), true
			}
			layers[i][k] = eff[k]
			break
		}
	}
	return layers[2], layers[1], layers[0]
}

// placePlayers gives every player its Since and orders them by first sight.
func (s *Store) placePlayers(snap *Snapshot, eff map[string]any, now time.Time) (map[uint32]seenPlayer, uint64, error) {
	raw, _ := eff["players"].(map[string]any)
	ps := snap.Players
	seqs := make([]uint64, len(ps))
	var fresh []int // players queryd has not seen: numbered in id order
	for i := range ps {
		if old, ok := s.seen[ps[i].ID]; ok {
			seqs[i] = old.seq
		} else {
			fresh = append(fresh, i)
		}
	}
	slices.SortFunc(fresh, func(a, b int) int { return cmp.Compare(ps[a].ID, ps[b].ID) })
	seq := s.seq
	for _, i := range fresh {
		seq++
		seqs[i] = seq
	}
	seen := make(map[uint32]seenPlayer, len(ps))
	for i := range ps {
		p := &ps[i]
		key := strconv.FormatUint(uint64(p.ID), 10)
		t := ""
		if m, ok := raw[key].(map[string]any); ok {
			if n, ok := m["time"].(json.Number); ok {
				t = string(n)
			}
		}
		old, known := s.seen[p.ID]
		sp := seenPlayer{seq: seqs[i], since: old.since, time: t}
		if !known {
			sp.since = now
		}
		if t != "" && (!known || t != old.time) {
			secs, err := number(entry(raw, key)["time"], "players."+key+".time", 0, MaxPlayerTime)
			if err != nil {
				return nil, 0, err
			}
			sp.since = now.Add(-time.Duration(secs * float64(time.Second)))
		}
		p.Since = sp.since
		seen[p.ID] = sp
	}
	order := make([]int, len(ps))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(seqs[a], seqs[b]) })
	sorted := make([]Player, len(ps))
	for j, i := range order {
		sorted[j] = ps[i]
	}
	snap.Players = sorted
	return seen, seq, nil
}

func entry(raw map[string]any, key string) map[string]any {
	v, _ := raw[key].(map[string]any)
	return v
}
