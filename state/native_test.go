package state

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// The protocol objects decode into Snapshot.Native: unset members keep
// their "unset" values (the config's then apply), and "other" is sorted.
func TestNativeFields(t *testing.T) {
	s, _ := newStore(t, `{"name":"base"}`)
	if snap := s.Snapshot(); snap.A2S != nil || snap.GameSpy4 != nil || snap.Bedrock != nil || snap.SQP != nil || snap.SAGL != nil {
		t.Fatalf("a document without protocol objects: %+v", snap.Native)
	}
	if _, err := s.Replace(doc(t, `{
		"a2s": {"app_id": 440, "protocol": 17, "game_id": "18446744073709551615"},
		"gamespy4": {"gametype": "SMP", "plugins": ""},
		"bedrock": {"edition": "MCEE", "server_id": 13253860892328930865, "ipv6_port": 19133, "other": {"b": "2", "a": "1"}},
		"sqp": {"other": {"teams": "2"}},
		"sagl": {}}`)); err != nil {
		t.Fatal(err)
	}
	snap := s.Snapshot()
	if a := snap.A2S; a == nil || a.AppID != 440 || a.Protocol != 17 || !a.HasGameID || a.GameID != 1<<64-1 {
		t.Errorf("a2s %+v", a)
	}
	g := snap.GameSpy4
	if g == nil || g.GameType == nil || *g.GameType != "SMP" || g.Plugins == nil || *g.Plugins != "" || g.GameID != nil || g.HostIP != nil {
		t.Errorf("gamespy4 %+v", g)
	}
	b := snap.Bedrock
	if b == nil || b.Edition != "MCEE" || b.ServerID != 13253860892328930865 || b.IPv6Port != 19133 || b.Protocol != -1 || b.GameModeNumber != -1 ||
		!reflect.DeepEqual(b.Other, []Rule{{"a", "1"}, {"b", "2"}}) {
		t.Errorf("bedrock %+v", b)
	}
	if snap.SQP == nil || !reflect.DeepEqual(snap.SQP.Other, []Rule{{"teams", "2"}}) || snap.SAGL == nil || len(snap.SAGL.Other) != 0 {
		t.Errorf("sqp %+v, sagl %+v", snap.SQP, snap.SAGL)
	}
	if _, err := s.Patch(doc(t, `{"a2s":{"app_id":null},"bedrock":null}`)); err != nil {
		t.Fatal(err)
	}
	if snap := s.Snapshot(); snap.A2S.AppID != -1 || snap.A2S.Protocol != 17 || snap.Bedrock != nil {
		t.Errorf("after removing a2s.app_id and bedrock: %+v %+v", snap.A2S, snap.Bedrock)
	}
}

func TestNativeFieldErrors(t *testing.T) {
	for _, tc := range []struct{ doc, path, says string }{
		{`{"a2s":{"app_id":65536}}`, "a2s.app_id", "0 to 65535"},
		{`{"a2s":{"protocol":256}}`, "a2s.protocol", "0 to 255"},
		{`{"a2s":{"game_id":"-1"}}`, "a2s.game_id", "unsigned"},
		{`{"a2s":{"game_id":true}}`, "a2s.game_id", "string of digits"},
		{`{"a2s":{"appid":1}}`, "a2s.appid", "did you mean app_id?"},
		{`{"a2s":[]}`, "a2s", "object"},
		{`{"gamespy4":{"hostip":1}}`, "gamespy4.hostip", "string"},
		{`{"gamespy4":{"plugins":"` + strings.Repeat("p", 257) + `"}}`, "gamespy4.plugins", "too long"},
		{`{"bedrock":{"edition":""}}`, "bedrock.edition", "empty"},
		{`{"bedrock":{"protocol":10000000}}`, "bedrock.protocol", "9999999"},
		{`{"bedrock":{"game_mode_number":256}}`, "bedrock.game_mode_number", "255"},
		{`{"bedrock":{"server_id":"x"}}`, "bedrock.server_id", "GUID"},
		{`{"sqp":{"teams":"2"}}`, "sqp.teams", "unknown field"},
		{`{"sagl":{"other":{"a":1}}}`, "sagl.other.a", "string"},
		{`{"sagl":{"other":{"":"x"}}}`, "sagl.other.", "empty key"},
		{`{"sagll":{}}`, "sagll", "did you mean sagl?"},
	} {
		err := Validate(doc(t, tc.doc))
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Path != tc.path || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%.60s: got %v, want an error at %q saying %q", tc.doc, err, tc.path, tc.says)
		}
	}
}

// FuzzNativeFields feeds arbitrary JSON as each protocol object: the store
// never panics, and a rejected change leaves the snapshot as it was.
func FuzzNativeFields(f *testing.F) {
	for _, seed := range []string{
		`{"app_id":440,"protocol":17,"game_id":"18446744073709551615","other":{"a":"b"}}`,
		`{"gametype":"SMP","game_id":"MINECRAFT","plugins":"","hostip":"127.0.0.1"}`,
		`{"edition":"MCPE","protocol":766,"server_id":13253860892328930865,"game_mode_number":1,"ipv6_port":0}`,
		`{"other":{"teams":"2","":"x"}}`, `{"app_id":-1}`, `[]`, `null`, `{"other":[]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := DecodeJSON([]byte(`{"x":` + string(data) + `}`))
		if err != nil {
			return
		}
		s, err := NewStore(nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, field := range []string{"a2s", "gamespy4", "bedrock", "sqp", "sagl"} {
			before := s.Snapshot()
			if _, err := s.Replace(map[string]any{field: v["x"]}); err != nil && s.Snapshot() != before {
				t.Fatalf("a rejected %s changed the snapshot", field)
			}
		}
	})
}
