package feed

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"unicode/utf8"

	"github.com/queryd/queryd/state"
)

// MaxLine is the longest message line accepted, in bytes, without the newline.
const MaxLine = 1 << 20

// Reply is one reply line.
type Reply struct {
	OK      bool            `json:"ok"`
	Version uint64          `json:"version,omitempty"`
	Error   string          `json:"error,omitempty"`
	State   json.RawMessage `json:"state,omitempty"`
	Peer    string          `json:"peer,omitempty"`
	// Local is, in a peer reply, the session's address as the game server
	// sees it ("IP:PORT": relay mode may give each client an address of
	// its own, so that ports repeat).
	Local string `json:"local,omitempty"`
	// Warnings are, in an accepted replace or patch, the values queryd
	// fitted to the state's limits ("state.players.3.name: cut to 64
	// characters (was 70)"), in path order, at most
	// state.MaxWarningLines and a line for the rest. A refused message
	// has none.
	Warnings []string `json:"warnings,omitempty"`
}

// message is one parsed request line.
type message struct {
	op    string
	state map[string]any
	port  int
	addr  netip.Addr // peer: the address the game server sees, when given
}

// parseMessage parses one line. The error says what is wrong and where.
func parseMessage(line []byte) (message, error) {
	if !utf8.Valid(line) {
		return message{}, errors.New("line is not valid UTF-8")
	}
	raw, err := state.DecodeJSON(line)
	if err != nil {
		return message{}, err
	}
	op, ok := raw["op"].(string)
	if !ok {
		return message{}, errors.New(`"op": want one of "replace", "patch", "ping", "get", "peer", "wake"`)
	}
	return messageOf(op, raw, true)
}

// messageOf checks the fields of a message with op: raw is the socket's
// whole line (withOp: it holds "op") or, over HTTP, the fields the request
// body carries beside the op its method and path name.
func messageOf(op string, raw map[string]any, withOp bool) (message, error) {
	m := message{op: op}
	allowed := map[string]bool{"op": withOp}
	switch op {
	case "replace", "patch":
		allowed["state"] = true
		st, ok := raw["state"].(map[string]any)
		if !ok {
			return message{}, fmt.Errorf(`"state": %s needs a state object`, op)
		}
		m.state = st
	case "ping", "get", "wake":
	case "peer":
		allowed["port"] = true
		n, ok := raw["port"].(json.Number)
		p, err := strconv.Atoi(string(n))
		if !ok || err != nil || p < 1 || p > 65535 {
			return message{}, errors.New(`"port": peer needs a port from 1 to 65535`)
		}
		m.port = p
		allowed["addr"] = true
		if a, ok := raw["addr"]; ok {
			str, _ := a.(string)
			ip, err := netip.ParseAddr(str)
			if err != nil || ip.Zone() != "" {
				return message{}, errors.New(`"addr": want the IP address the game server sees the client at, e.g. "127.12.34.56"`)
			}
			m.addr = ip
		}
	default:
		return message{}, fmt.Errorf(`"op": unknown op %q (want replace, patch, ping, get, peer or wake)`, op)
	}
	for k := range raw {
		if !allowed[k] {
			return message{}, fmt.Errorf("%q: unknown field for op %q", k, op)
		}
	}
	return m, nil
}
