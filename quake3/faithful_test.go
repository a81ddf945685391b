package quake3

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/queryd/queryd/internal/polltest"
)

// infoOnlyKeys are the infoResponse keys of ioquake3 that its
// statusResponse does not carry, so a poll (getstatus) never sees them.
var infoOnlyKeys = []string{"voip", "pure"}

// TestFaithfulToIoquake3Capture: a handler with the default config, over
// the state a poll of the captured ioquake3 server makes (FromStatus of
// its statusResponse), answers the captured requests as that server did:
// statusResponse with exactly its cvars and values (com_protocol and no
// protocol, both gamenames) and its player lines; infoResponse with its
// keys and values (protocol 71 from com_protocol, gamename Quake3Arena
// from com_gamename) but for the info-only keys a poll cannot see.
func TestFaithfulToIoquake3Capture(t *testing.T) {
	var stock *Status
	for _, c := range loadCaptures(t) {
		if strings.HasPrefix(string(c.req), q3+"getstatus") {
			st, err := ParseStatusResponse(c.reply)
			if err != nil {
				t.Fatal(err)
			}
			stock = st
			break
		}
	}
	h := NewHandler(Config{}, DefaultPacketRate, 0)
	h.Update(polltest.Valid(t, FromStatus(stock)))
	for _, c := range loadCaptures(t) {
		r, err := ParseRequest(c.req)
		if err != nil || c.reply == nil {
			continue
		}
		got, _ := serve(t, h, string(c.req))
		switch r.Type {
		case TypeStatus:
			theirs, _ := ParseStatusResponse(c.reply)
			ours, err := ParseStatusResponse(got)
			if err != nil {
				t.Fatalf("%q: %v", c.req, err)
			}
			if !maps.Equal(ours.Info.Values, theirs.Info.Values) {
				t.Errorf("%q: statusResponse\n ours   %v\n theirs %v", c.req, ours.Info.Values, theirs.Info.Values)
			}
			if !slices.Equal(ours.Players, theirs.Players) {
				t.Errorf("%q: players %v, ioquake3 %v", c.req, ours.Players, theirs.Players)
			}
		case TypeInfo:
			theirs, _ := ParseInfoResponse(c.reply)
			ours, err := ParseInfoResponse(got)
			if err != nil {
				t.Fatalf("%q: %v", c.req, err)
			}
			want := maps.Clone(theirs.Values)
			for _, k := range infoOnlyKeys {
				delete(want, k)
			}
			if want["clients"] != "1" { // the first capture came before the bot joined
				continue
			}
			if !maps.Equal(ours.Values, want) {
				t.Errorf("%q: infoResponse\n ours   %v\n theirs %v (without %v)", c.req, ours.Values, want, infoOnlyKeys)
			}
		}
	}
}

// The protocol number and the infoResponse's gamename follow the state's
// rules as ioquake3 names them, else the config; the statusResponse leaves
// protocol out only for a state with com_protocol and no protocol.
func TestProtocolFromRules(t *testing.T) {
	for _, tc := range []struct {
		cfg                      Config
		doc                      string
		infoProto, infoGame      string
		statusProto, statusHasIt string
	}{
		{Config{}, `{"folder":"baseoa"}`, "68", "baseoa", "68", "yes"},
		{Config{Protocol: 84}, `{"rules":{"protocol":"84"}}`, "84", DefaultGameName, "84", "yes"},
		{Config{Protocol: 84}, `{"rules":{"com_protocol":"71","com_gamename":"Quake3Arena"},"folder":"baseoa"}`, "71", "Quake3Arena", "", "no"},
		{Config{GameName: "mine"}, `{"rules":{"com_protocol":"71","protocol":"72","com_gamename":"Quake3Arena"}}`, "72", "mine", "72", "yes"},
	} {
		h := handlerFor(t, tc.cfg, tc.doc)
		b, _ := serve(t, h, q3+"getinfo")
		info, err := ParseInfoResponse(b)
		if err != nil {
			t.Fatal(err)
		}
		b, _ = serve(t, h, q3+"getstatus")
		st, err := ParseStatusResponse(b)
		if err != nil {
			t.Fatal(err)
		}
		_, has := st.Info.Values["protocol"]
		if info.Get("protocol") != tc.infoProto || info.Get("gamename") != tc.infoGame || st.Info.Get("protocol") != tc.statusProto || has != (tc.statusHasIt == "yes") {
			t.Errorf("%s: infoResponse protocol %q gamename %q; statusResponse protocol %q (present %v)", tc.doc,
				info.Get("protocol"), info.Get("gamename"), st.Info.Get("protocol"), has)
		}
	}
}
