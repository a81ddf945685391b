package a2s

import (
	"testing"

	"github.com/queryd/queryd/internal/polltest"
	"github.com/queryd/queryd/state"
)

// The state's "a2s" object sets A2S_INFO's protocol byte, app id and EDF
// game id over the config's; game_id 0 leaves the game id out even when
// [a2s] game_id is set; without the object the config's stand.
func TestEncodeInfoNative(t *testing.T) {
	cfg := Config{AppID: DefaultAppID, Protocol: DefaultProtocol, GameID: 99}
	for _, tc := range []struct {
		doc             string
		app, proto      int
		gameID          uint64
		edfGameIDBitSet bool
	}{
		{`{"name":"fed"}`, DefaultAppID, DefaultProtocol, 99, true},
		{`{"a2s":{"app_id":440,"protocol":7}}`, 440, 7, 99, true},
		{`{"a2s":{"game_id":"0"}}`, DefaultAppID, DefaultProtocol, 0, false},
		{`{"a2s":{"app_id":0,"game_id":"18446744073709551615"}}`, 0, DefaultProtocol, 1<<64 - 1, true},
	} {
		doc, err := state.DecodeJSON([]byte(tc.doc))
		if err != nil {
			t.Fatal(err)
		}
		info, err := ParseInfo(EncodeInfo(cfg, polltest.Valid(t, doc), 0))
		if err != nil {
			t.Fatal(err)
		}
		if int(info.AppID) != tc.app || int(info.Protocol) != tc.proto || info.GameID != tc.gameID || (info.EDF&edfGameID != 0) != tc.edfGameIDBitSet {
			t.Errorf("%v: app id %d, protocol %d, game id %d (EDF %#x)", tc.doc, info.AppID, info.Protocol, info.GameID, info.EDF)
		}
	}
}
