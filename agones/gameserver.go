package agones

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// gameServer is the part of the SDK's GameServer message queryd reads, in
// the SDK server's JSON (grpc-gateway: proto field names, 64-bit integers
// as strings). Fields it does not read are ignored, so a newer Agones with
// more fields still parses.
type gameServer struct {
	ObjectMeta *objectMeta `json:"object_meta"`
	// ObjectMetaCamel is object_meta as protojson writes it without proto
	// names (lowerCamelCase), which a gateway configured otherwise sends.
	ObjectMetaCamel *objectMeta `json:"objectMeta"`
	Status          *gsStatus   `json:"status"`
}

type objectMeta struct {
	Name        string            `json:"name"`
	Annotations map[string]string `json:"annotations"`
	Labels      map[string]string `json:"labels"`
}

type gsStatus struct {
	State    string             `json:"state"`
	Ports    []gsPort           `json:"ports"`
	Counters map[string]counter `json:"counters"`
	Lists    map[string]list    `json:"lists"`
}

type gsPort struct {
	Name string `json:"name"`
	Port int64s `json:"port"`
}

type counter struct {
	Count    int64s `json:"count"`
	Capacity int64s `json:"capacity"`
}

type list struct {
	Capacity int64s   `json:"capacity"`
	Values   []string `json:"values"`
}

// meta returns the object metadata, whichever spelling carried it (an
// empty one when neither did).
func (gs *gameServer) meta() *objectMeta {
	switch {
	case gs.ObjectMeta != nil:
		return gs.ObjectMeta
	case gs.ObjectMetaCamel != nil:
		return gs.ObjectMetaCamel
	}
	return &objectMeta{}
}

// int64s is a 64-bit integer as proto3 JSON writes it: a JSON string of
// digits ("16"); a JSON number is accepted too, null is 0.
type int64s int64

// UnmarshalJSON accepts "16", 16 or null.
func (n *int64s) UnmarshalJSON(b []byte) error {
	s := string(b)
	if s == "null" {
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("want a 64-bit integer, got %.40s", b)
	}
	*n = int64s(v)
	return nil
}

// watchLine is one line of GET /watch/gameserver: the GameServer after a
// change, or the error that ended the stream.
type watchLine struct {
	Result *gameServer `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// refusal is why a line or an answer was not applied: its reason (a label
// of queryd_agones_reads_total) and what was wrong.
type refusal struct {
	reason string
	err    error
}

func (r *refusal) Error() string { return r.reason + ": " + r.err.Error() }

func refuse(reason string, format string, args ...any) *refusal {
	return &refusal{reason: reason, err: fmt.Errorf(format, args...)}
}

// parseWatchLine reads one line of the watch stream. A line that is not
// JSON, is shaped otherwise or carries an error is refused (a *refusal).
func parseWatchLine(line []byte) (*gameServer, error) {
	var w watchLine
	if err := decode(line, &w); err != nil {
		return nil, err
	}
	switch {
	case w.Error != nil:
		return nil, refuse(ReasonError, "the SDK server sent an error: code %d: %.200q", w.Error.Code, w.Error.Message)
	case w.Result == nil:
		return nil, refuse(ReasonShape, "want {\"result\": <GameServer>}, got no result")
	}
	return w.Result, checkShape(w.Result)
}

// parseGameServer reads the body of GET /gameserver: the GameServer alone.
func parseGameServer(body []byte) (*gameServer, error) {
	var gs *gameServer
	if err := decode(body, &gs); err != nil {
		return nil, err
	}
	if gs == nil {
		return nil, refuse(ReasonShape, "want a GameServer object, got null")
	}
	return gs, checkShape(gs)
}

// decode unmarshals b into v, telling text that is not JSON from JSON of
// another shape.
func decode(b []byte, v any) error {
	if len(bytes.TrimSpace(b)) == 0 {
		return refuse(ReasonNotJSON, "an empty line")
	}
	err := json.Unmarshal(b, v)
	var syn *json.SyntaxError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &syn):
		return refuse(ReasonNotJSON, "%v", err)
	}
	return refuse(ReasonShape, "%v", err)
}

// checkShape refuses a GameServer without the status queryd needs.
func checkShape(gs *gameServer) error {
	if gs.Status == nil {
		return refuse(ReasonShape, "the GameServer has no status")
	}
	return nil
}
