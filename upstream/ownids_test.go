package upstream

import (
	"context"
	"encoding/json"
	"io"
	"net/netip"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/queryd/queryd/module"
)

// ownIDs is a protocol whose answers key players by the server's own
// stable ids (as SAGL's), and that records the options it was polled with.
type ownIDs struct {
	own        bool
	ownAddress atomic.Bool
}

func (*ownIDs) Name() string { return "ownids" }

func (o *ownIDs) Poll(_ context.Context, _ netip.AddrPort, opts module.PollOptions) (module.Polled, error) {
	o.ownAddress.Store(opts.OwnAddress)
	a, b := "0", "1" // by place
	if o.own {
		a, b = "7", "9"
	}
	return module.Polled{OwnIDs: o.own, Doc: map[string]any{"players": map[string]any{
		a: map[string]any{"name": "Thomas", "score": json.Number("1")},
		b: map[string]any{"name": "Sam"},
	}}}, nil
}

// With Polled.OwnIDs the poller keeps the server's player ids; without,
// it gives its own to players keyed by place.
func TestPollerOwnIDs(t *testing.T) {
	for _, own := range []bool{true, false} {
		p := &ownIDs{own: own}
		_, store, _ := startPoller(t, p, 0, io.Discard)
		waitFor(t, "the answer", func() bool { return len(store.Snapshot().Players) == 2 })
		var ids []uint32
		for _, pl := range store.Snapshot().Players {
			ids = append(ids, pl.ID)
		}
		slices.Sort(ids)
		if own && !slices.Equal(ids, []uint32{7, 9}) {
			t.Errorf("OwnIDs: ids %v, want the server's 7, 9", ids)
		}
		if !own && slices.Contains(ids, 7) {
			t.Errorf("without OwnIDs: ids %v, want the poller's", ids)
		}
		if p.ownAddress.Load() {
			t.Error("polled with OwnAddress, but OwnGamePort is off")
		}
	}
}

// In relay mode (OwnGamePort) the poller asks the module to leave out its
// protocol object's address and ports (module.PollOptions.OwnAddress).
func TestPollerOwnAddress(t *testing.T) {
	o := &ownIDs{own: true}
	p, err := New(Config{Protocol: o, Address: upAddr, OwnGamePort: true, Publish: func(map[string]any) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	p.poll(context.Background())
	if !o.ownAddress.Load() {
		t.Error("OwnGamePort on: the module was not polled with OwnAddress")
	}
}
