package state

import (
	"encoding/json"
	"time"
)

// Player is one player as every protocol sees it.
type Player struct {
	ID    uint32    // the feed's key, a string of digits
	Name  string    // display name, UTF-8
	Score int32     // frags, kills, points
	Ping  int32     // round trip in milliseconds (0 when not given), PingUnknown when the feeder does not know it
	Bot   bool      // a bot rather than a person
	Since time.Time // when the player connected (from "time", else first seen)
}

// PingUnknown is a Player's Ping when the feeder said it does not know it
// (any negative ping in the document). Each protocol that shows pings says
// how it shows this one (Quake 3 999, SAGL null, SQP 0).
const PingUnknown = -1

// Rule is one server rule (a console variable), as A2S_RULES and Quake 3 show them.
type Rule struct {
	Key, Value string
}

// Value is one of the gamemode's own values (SAGL "values"): a string, a
// json.Number, a bool or nil.
type Value struct {
	Key   string
	Value any
}

// Link is one named web link (SAGL "links").
type Link struct {
	Name, URL string
}

// SourceTV describes a SourceTV relay advertised in A2S_INFO (EDF 0x40).
type SourceTV struct {
	Port uint16
	Name string
}

// Branding is the server's look in SAGL: colours ("#rrggbb", empty for the
// default) and the logo file.
type Branding struct {
	Primary, Secondary string // "" means null (SAGL's own colour)
	ShowName           bool
	Logo               string // path of a PNG or JPEG file, "" for none
}

// Snapshot is one immutable, validated state of the server. Protocols encode
// their replies from it once; it is never changed after the Store publishes it.
type Snapshot struct {
	Version uint64    // increases by one with every accepted change
	Made    time.Time // when this snapshot was published

	Name        string
	Map         string
	Game        string
	Folder      string
	GameVersion string // the document's "version"
	MaxPlayers  int
	Players     []Player // in first-seen order
	Rules       []Rule   // sorted by key
	Values      []Value  // sorted by key

	Password   bool
	VAC        bool
	ServerType string // "dedicated", "listen" or "proxy"
	OS         string // "linux", "windows" or "mac" (document key "environment")
	SteamID    uint64 // 0 when unset
	GamePort   uint16 // 0 when unset
	Keywords   string
	SourceTV   *SourceTV // nil when unset

	Protocol    int // SAGL protocol number, 0 when unset
	Description string
	Gamemode    string
	Language    string
	Tags        []string
	Links       []Link // sorted by name
	Branding    Branding

	Native // the protocol objects ("a2s", "bedrock", …): native.go

	doc map[string]any // the effective document, for Document
}

// Bots returns how many players are marked as bots.
func (s *Snapshot) Bots() int {
	n := 0
	for i := range s.Players {
		if s.Players[i].Bot {
			n++
		}
	}
	return n
}

// Document returns the effective state document as JSON (what the feed's
// "get" returns).
func (s *Snapshot) Document() json.RawMessage {
	b, err := json.Marshal(s.doc)
	if err != nil { // cannot happen: doc holds only JSON-decoded values
		return json.RawMessage(`{}`)
	}
	return b
}
