package agones

import "strconv"

// playerIDs gives the players of the List stable ids from one GameServer
// to the next, so that a player keeps its place and its connection time
// (A2S duration) while others come and go: a List has values, no ids. A
// player is known by its value and how many equal values come before it
// (Agones refuses duplicates, but the JSON may have them); it keeps its id
// for as long as the List has it, and a new one takes the next number. Ids
// of players gone are forgotten. The zero value has none yet.
type playerIDs struct {
	byKey map[string]uint32
	next  uint32
}

// assign returns the ids of values, in their order, and the playerIDs to
// use for the next List; p itself is not changed (a GameServer refused
// later leaves the ids as they were).
func (p playerIDs) assign(values []string) ([]uint32, playerIDs) {
	seen := make(map[string]int, len(values))
	keys := make([]string, len(values))
	for i, v := range values {
		seen[v]++
		keys[i] = v + "\x00" + strconv.Itoa(seen[v])
	}
	out := make([]uint32, len(values))
	byKey := make(map[string]uint32, len(values))
	taken := make(map[uint32]bool, len(values))
	for _, k := range keys {
		if id, ok := p.byKey[k]; ok {
			byKey[k], taken[id] = id, true
		}
	}
	next := p.next
	for i, k := range keys {
		id, ok := byKey[k]
		if !ok {
			for taken[next] {
				next++
			}
			id = next
			next++
			byKey[k], taken[id] = id, true
		}
		out[i] = id
	}
	return out, playerIDs{byKey: byKey, next: next}
}
