package interop

// The GameSpy4 / Minecraft query clients, pinned in go.mod for the GameSpy4
// checks (go mod tidy keeps only imported modules).
import (
	_ "github.com/dreamscached/minequery/v2"
	_ "github.com/xrjr/mcutils/pkg/query"
)
