package agones

// Class is what a GameServer's state means for queryd: answer its state,
// not yet, or nothing.
type Class uint8

// The classes of GameServer states.
const (
	// ClassUnread: no GameServer has been read since the watcher started.
	ClassUnread Class = iota
	// ClassStarting: the game server is not ready yet (Scheduled,
	// RequestReady, and the states before them): queryd answers nothing of
	// it yet.
	ClassStarting
	// ClassAnswering: the game server takes players (Ready, Allocated,
	// Reserved): queryd answers its state.
	ClassAnswering
	// ClassSilent: the game server is going or gone (Shutdown, Unhealthy,
	// Error) or in a state queryd does not know: queryd answers nothing.
	ClassSilent
)

// String returns the class's name ("answering").
func (c Class) String() string {
	switch c {
	case ClassStarting:
		return "starting"
	case ClassAnswering:
		return "answering"
	case ClassSilent:
		return "silent"
	}
	return "unread"
}

// classes maps Agones' GameServer states (agones.dev/v1
// GameServerState) to classes. A state not listed is ClassSilent.
var classes = map[string]Class{
	"PortAllocation": ClassStarting,
	"Creating":       ClassStarting,
	"Starting":       ClassStarting,
	"Scheduled":      ClassStarting,
	"RequestReady":   ClassStarting,
	"Ready":          ClassAnswering,
	"Allocated":      ClassAnswering,
	"Reserved":       ClassAnswering,
	"Shutdown":       ClassSilent,
	"Unhealthy":      ClassSilent,
	"Error":          ClassSilent,
}

// ClassOf returns the class of a GameServer state ("Ready" →
// ClassAnswering). An unknown state (a newer Agones, or "") is
// ClassSilent: queryd does not list a server it cannot tell is taking
// players.
func ClassOf(state string) Class {
	if c, ok := classes[state]; ok {
		return c
	}
	return ClassSilent
}
