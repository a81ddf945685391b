package state

// Limits of the state document. They bound what one snapshot can hold so that
// every protocol's encoded replies, and the memory a feeder can make queryd use,
// stay bounded. Lengths are in Unicode characters unless they say bytes.
const (
	MaxPlayers      = 4096 // entries in "players"
	MaxPlayerID     = 1<<32 - 1
	MaxRules        = 1024 // entries in "rules"
	MaxValues       = 64   // entries in "values"
	MaxTags         = 32   // entries in "tags"
	MaxLinks        = 16   // entries in "links"
	MaxNameLen      = 256  // "name"
	MaxShortLen     = 128  // "map", "game", "folder", "version", "gamemode", "keywords", sourcetv "name"
	MaxPlayerName   = 64   // a player's "name"
	MaxRuleKeyLen   = 128  // a key of "rules"
	MaxRuleValueLen = 256  // a value of "rules"
	MaxValueKeyLen  = 64   // a key of "values"
	MaxValueLen     = 256  // a string value of "values"
	MaxTagLen       = 64   // one tag
	MaxLinkNameLen  = 32   // a key of "links"
	MaxURLLen       = 512  // a value of "links"
	MaxDescription  = 1000 // "description"
	MaxLanguageLen  = 32   // "language"
	MaxPathLen      = 4096 // branding "logo" (a file path)
	MaxMaxPlayers   = 65535
	MaxPlayerTime   = 10 * 365 * 24 * 3600 // seconds a player can have been connected
)

// MaxDepth is how deeply a state document may nest objects and arrays, the
// document itself counting one. The schema needs 3 ({"players": {"1":
// {"name": ...}}}); the slack keeps the clearer type errors ("want a string,
// got an object") for near misses. A deeper document is refused before any
// field is read or merged, so no step recurses further than this.
const MaxDepth = 8
