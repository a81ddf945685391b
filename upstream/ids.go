package upstream

import (
	"strconv"
)

// ids gives the players of successive answers stable ids: neither protocol
// has one (A2S_PLAYER's index is 0 for everyone on most Source games, and
// a Quake 3 status line has none). A player is known by its name and how
// many players of the same name come before it in the answer; it keeps
// its id for as long as the answers list it, and a new one gets the next
// number (so new players are listed in the answer's order, after those
// already there). Ids of players gone are forgotten.
type ids struct {
	byKey map[string]uint32
	next  uint32
}

// rekey re-keys doc's players, which the mapping keyed by place ("0",
// "1", …), by their stable ids.
func (d *ids) rekey(doc map[string]any) {
	players, _ := doc["players"].(map[string]any)
	if d.byKey == nil {
		d.byKey = map[string]uint32{}
	}
	seen := map[string]int{}
	keys := make([]string, len(players))
	for i := range keys {
		m, _ := players[strconv.Itoa(i)].(map[string]any)
		name, _ := m["name"].(string)
		seen[name]++
		keys[i] = name + "\x00" + strconv.Itoa(seen[name])
	}
	taken := make(map[uint32]bool, len(keys))
	byKey := make(map[string]uint32, len(keys))
	for _, k := range keys {
		if id, ok := d.byKey[k]; ok {
			byKey[k], taken[id] = id, true
		}
	}
	out := make(map[string]any, len(players))
	for i, k := range keys {
		id, ok := byKey[k]
		if !ok {
			for taken[d.next] {
				d.next++
			}
			id = d.next
			d.next++
			byKey[k], taken[id] = id, true
		}
		out[strconv.FormatUint(uint64(id), 10)] = players[strconv.Itoa(i)]
	}
	d.byKey = byKey
	if players != nil {
		doc["players"] = out
	}
}
