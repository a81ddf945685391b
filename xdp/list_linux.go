//go:build linux && (386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64)

package xdp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"

	"github.com/queryd/queryd/module"
)

// programList is the program's one list of protocols (bpf/protocols.h), as
// the object's BTF and read-only data give it (queryd.c's fast_protocols):
// for each protocol, in the list's order (its row in the counters, the
// packet rates and divert's mask), its name, which is its module's Name,
// its first reply slot and its handler's slots by name. The Go side names
// no protocol: its rows, labels and slots all come from here.
type programList struct {
	rows   []listRow
	byName map[string]int
	slots  uint32 // the reply slots of all protocols (NSLOTS)
}

// listRow is one protocol of the list.
type listRow struct {
	name  string
	first uint32                         // its first reply slot
	slots map[module.FastQuery]slotRange // its handler's enum NAME_slot
}

// slotRange is a reply slot of a handler (n 1), or a range of them
// (NAME_X … NAME_X_LAST), from the protocol's first slot.
type slotRange struct{ at, n uint32 }

// listVar is the variable queryd.c lists the protocols in.
const listVar = "fast_protocols"

// readList reads the list from a program's spec.
func readList(spec *ebpf.CollectionSpec) (*programList, error) {
	v := spec.Variables[listVar]
	if v == nil || v.Type == nil {
		return nil, fmt.Errorf("the program has no %s", listVar)
	}
	st, ok := btf.UnderlyingType(v.Type.Type).(*btf.Struct)
	if !ok {
		return nil, fmt.Errorf("%s is not a struct", listVar)
	}
	if len(st.Members) > maxProtos {
		return nil, fmt.Errorf("%d protocols, the program's tables have %d rows", len(st.Members), maxProtos)
	}
	if len(v.Value) != 4*len(st.Members) {
		return nil, fmt.Errorf("%s: %d bytes for %d protocols", listVar, len(v.Value), len(st.Members))
	}
	l := &programList{byName: map[string]int{}}
	for i, m := range st.Members {
		e, ok := btf.UnderlyingType(m.Type).(*btf.Enum)
		if !ok {
			return nil, fmt.Errorf("%s.%s: not an enum of slots", listVar, m.Name)
		}
		slots, n, err := slotNames(m.Name, e)
		if err != nil {
			return nil, err
		}
		first := binary.LittleEndian.Uint32(v.Value[4*i:])
		if first != l.slots {
			return nil, fmt.Errorf("%s: first slot %d, want %d (the list's order)", m.Name, first, l.slots)
		}
		if _, dup := l.byName[m.Name]; dup {
			return nil, fmt.Errorf("%s is twice in the list", m.Name)
		}
		l.byName[m.Name] = i
		l.rows = append(l.rows, listRow{name: m.Name, first: first, slots: slots})
		l.slots += n
	}
	return l, nil
}

// slotNames reads a handler's enum NAME_slot: NAME_X is FastQuery "x",
// NAME_X_LAST ends a range from NAME_X, NAME_SLOTS is the count.
func slotNames(proto string, e *btf.Enum) (map[module.FastQuery]slotRange, uint32, error) {
	prefix := strings.ToUpper(proto) + "_"
	slots := map[module.FastQuery]slotRange{}
	last := map[string]uint32{}
	n := uint32(0)
	for _, v := range e.Values {
		name, ok := strings.CutPrefix(v.Name, prefix)
		if !ok {
			return nil, 0, fmt.Errorf("%s: slot %s does not start with %s", proto, v.Name, prefix)
		}
		switch {
		case name == "SLOTS":
			n = uint32(v.Value)
		case strings.HasSuffix(name, "_LAST"):
			last[strings.TrimSuffix(name, "_LAST")] = uint32(v.Value)
		default:
			slots[module.FastQuery(strings.ToLower(name))] = slotRange{at: uint32(v.Value), n: 1}
		}
	}
	for name, end := range last {
		q := module.FastQuery(strings.ToLower(name))
		r, ok := slots[q]
		if !ok || end < r.at {
			return nil, 0, fmt.Errorf("%s: %s_LAST without %s", proto, name, name)
		}
		r.n = end - r.at + 1
		slots[q] = r
	}
	if n == 0 {
		return nil, 0, fmt.Errorf("%s: no %sSLOTS", proto, prefix)
	}
	for q, r := range slots {
		if r.at+r.n > n {
			return nil, 0, fmt.Errorf("%s: slot %s past %sSLOTS", proto, q, prefix)
		}
	}
	return slots, n, nil
}

// row is the row of the protocol named name.
func (l *programList) row(name string) (int, bool) {
	i, ok := l.byName[name]
	return i, ok
}

// slot is the program's reply slot for a reply of protocol row i.
func (l *programList) slot(i int, r module.FastReply) (uint32, error) {
	row := &l.rows[i]
	sr, ok := row.slots[r.Query]
	if !ok {
		return 0, fmt.Errorf("%s: the program's handler has no slot %q", row.name, r.Query)
	}
	if r.Index < 0 || uint32(r.Index) >= sr.n {
		return 0, fmt.Errorf("%s: slot %q has %d places, not %d", row.name, r.Query, sr.n, r.Index)
	}
	return row.first + sr.at + uint32(r.Index), nil
}

// check reports whether the program answers p's fast queries: a handler
// for its protocol and a slot for each reply FastReplies hands over now.
func (l *programList) check(p module.Protocol) error {
	fp, ok := p.(module.FastPath)
	if !ok {
		return nil
	}
	i, ok := l.row(p.Name())
	if !ok {
		return fmt.Errorf("%s: the XDP program has no handler for it (xdp/bpf/protocols.h)", p.Name())
	}
	var errs []error
	fp.FastReplies(time.Now(), func(r module.FastReply) {
		if _, err := l.slot(i, r); err != nil {
			errs = append(errs, err)
		}
	})
	return errors.Join(errs...)
}

// embedded is the list of the program package xdp embeds.
var embedded = sync.OnceValues(func() (*programList, error) {
	spec, err := loadQueryd()
	if err != nil {
		return nil, err
	}
	return readList(spec)
})
