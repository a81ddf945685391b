package quake3

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

const q3 = "\xff\xff\xff\xff"

var exampleCfg = Config{GameName: "Quake3Arena", Protocol: 71}

const exampleDoc = `{"name":"My Server","map":"q3dm17","max_players":16,"folder":"baseq3",
	"players":{"1":{"name":"Alice","score":12,"ping":31},"2":{"name":"Bot","score":7,"ping":50,"bot":true}},
	"rules":{"timelimit":"20","fraglimit":30}}`

func TestInfoExact(t *testing.T) {
	h := handlerFor(t, exampleCfg, exampleDoc)
	base := q3 + "infoResponse\n" +
		`\g_needpass\0\gametype\0\sv_maxclients\16\g_humanplayers\1\clients\2\mapname\q3dm17\hostname\My Server\protocol\71\gamename\Quake3Arena`
	cases := []struct{ req, want string }{
		{q3 + "getinfo", base},
		{q3 + "getinfo\n", base},
		{q3 + "getinfo\x00", base},
		{q3 + "GETINFO", base},
		{q3 + "getInfo ", base},
		{q3 + "getinfo xyz123", base + `\challenge\xyz123`},
		{q3 + "getinfo xyz123\n", base + `\challenge\xyz123`},
		{q3 + "getinfo  A_ch4Lleng3\r\n", base + `\challenge\A_ch4Lleng3`},
	}
	for _, c := range cases {
		got, outcome := serve(t, h, c.req)
		if string(got) != c.want {
			t.Errorf("%q:\n got %q\nwant %q", c.req, got, c.want)
		}
		if outcome != "answered" {
			t.Errorf("%q: outcome %s", c.req, outcome)
		}
	}
}

func TestStatusExact(t *testing.T) {
	h := handlerFor(t, exampleCfg, exampleDoc)
	body := `\sv_hostname\My Server\mapname\q3dm17\sv_maxclients\16\protocol\71\gamename\Quake3Arena\g_gametype\0\g_needpass\0\fraglimit\30\timelimit\20` + "\n" +
		"12 31 \"Alice\"\n7 0 \"Bot\"\n"
	cases := []struct{ req, want string }{
		{q3 + "getstatus", q3 + "statusResponse\n" + body},
		{q3 + "getstatus\n", q3 + "statusResponse\n" + body},
		{q3 + "getstatus\x00", q3 + "statusResponse\n" + body},
		{q3 + "getStatus xyz123", q3 + "statusResponse\n" + `\challenge\xyz123` + body},
	}
	for _, c := range cases {
		got, _ := serve(t, h, c.req)
		if string(got) != c.want {
			t.Errorf("%q:\n got %q\nwant %q", c.req, got, c.want)
		}
	}
}

// TestStatusUnknownPing: a player whose ping is unknown (negative in the
// state) shows 999, as ioquake3 shows a client not active yet; a bot
// shows 0 whatever its ping, and a ping of 0 that is no bot shows 1.
func TestStatusUnknownPing(t *testing.T) {
	h := handlerFor(t, exampleCfg, `{"name":"s","players":{"1":{"name":"Conn","score":0,"ping":-1},
		"2":{"name":"Bot","score":4,"ping":-1,"bot":true},"3":{"name":"Zero","score":2,"ping":0},"4":{"name":"Py","score":3.0,"ping":-5.0}}}`)
	got, _ := serve(t, h, q3+"getstatus")
	want := "\n0 999 \"Conn\"\n4 0 \"Bot\"\n2 1 \"Zero\"\n3 999 \"Py\"\n"
	if !strings.HasSuffix(string(got), want) {
		t.Fatalf("got %q, want the lines %q", got, want)
	}
}

func TestExtrasAndGametype(t *testing.T) {
	cfg := Config{Protocol: 84, GameType: 5, Extra: []KeyValue{{"sv_punkbuster", "0"}, {"HostName", "ignored"}}}
	h := handlerFor(t, cfg, `{"name":"ET","map":"oasis","folder":"et main","max_players":20,"password":true,
		"version":"ET 2.60b","rules":{"g_gametype":"4","sv_hostname":"dup","Mapname":"dup"}}`)
	got, _ := serve(t, h, q3+"getinfo")
	want := q3 + "infoResponse\n" + `\sv_punkbuster\0\g_needpass\1\gametype\4\sv_maxclients\20\g_humanplayers\0\clients\0\mapname\oasis\hostname\ET\protocol\84\gamename\et_main`
	if string(got) != want {
		t.Errorf("info:\n got %q\nwant %q", got, want)
	}
	got, _ = serve(t, h, q3+"getstatus")
	want = q3 + "statusResponse\n" + `\sv_hostname\ET\mapname\oasis\sv_maxclients\20\protocol\84\gamename\et_main\g_gametype\4\g_needpass\1\version\ET 2.60b\sv_punkbuster\0` + "\n"
	if string(got) != want {
		t.Errorf("status:\n got %q\nwant %q", got, want)
	}
}

func TestEscaping(t *testing.T) {
	doc := `{"name":"a\\b;c\"d\ne\rf\tg","map":"m\\1","max_players":4,
		"players":{"1":{"name":"\"q\\u\";x\n","score":-3,"ping":0}},
		"rules":{"k\\e;y\"":"v\\a;l\"\n","ünï":"cödé"}}`
	h := handlerFor(t, Config{GameName: "my game\\x"}, doc)
	got, _ := serve(t, h, q3+"getinfo")
	want := q3 + "infoResponse\n" + `\g_needpass\0\gametype\0\sv_maxclients\4\g_humanplayers\1\clients\1\mapname\m/1\hostname\a/b:c'd e f g\protocol\68\gamename\my_game/x`
	if string(got) != want {
		t.Errorf("info:\n got %q\nwant %q", got, want)
	}
	got, _ = serve(t, h, q3+"getstatus")
	want = q3 + "statusResponse\n" + `\sv_hostname\a/b:c'd e f g\mapname\m/1\sv_maxclients\4\protocol\68\gamename\my_game/x\g_gametype\0\g_needpass\0\k/e:y'\v/a:l' \ünï\cödé` + "\n" +
		"-3 1 \"'q/u':x \"\n"
	if string(got) != want {
		t.Errorf("status:\n got %q\nwant %q", got, want)
	}
}

func TestEmptyServer(t *testing.T) {
	h := handlerFor(t, Config{}, `{"name":"","map":"","max_players":0}`)
	got, _ := serve(t, h, q3+"getinfo c")
	want := q3 + "infoResponse\n" + `\g_needpass\0\gametype\0\sv_maxclients\1\g_humanplayers\0\clients\0\mapname\\hostname\\protocol\68\gamename\queryd\challenge\c`
	if string(got) != want {
		t.Errorf("info:\n got %q\nwant %q", got, want)
	}
	got, _ = serve(t, h, q3+"getstatus")
	want = q3 + "statusResponse\n" + `\sv_hostname\\mapname\\sv_maxclients\1\protocol\68\gamename\queryd\g_gametype\0\g_needpass\0` + "\n"
	if string(got) != want {
		t.Errorf("status:\n got %q\nwant %q", got, want)
	}
}

func TestSixtyFourPlayers(t *testing.T) {
	doc := `{"name":"Full","map":"q3tourney2","max_players":64,"players":` +
		playersJSON(64, func(i int) string { return fmt.Sprintf("^%dPlayer %d", i%8, i) }) + `}`
	h := handlerFor(t, exampleCfg, doc)
	var lines strings.Builder
	for i := 0; i < 64; i++ {
		fmt.Fprintf(&lines, "%d %d \"^%dPlayer %d\"\n", i*3-5, 20+i, i%8, i)
	}
	got, _ := serve(t, h, q3+"getstatus 64")
	want := q3 + "statusResponse\n" + `\challenge\64\sv_hostname\Full\mapname\q3tourney2\sv_maxclients\64\protocol\71\gamename\Quake3Arena\g_gametype\0\g_needpass\0` + "\n" + lines.String()
	if string(got) != want {
		t.Errorf("status:\n got %q\nwant %q", got, want)
	}
	info, _ := serve(t, h, q3+"getinfo")
	if !bytes.Contains(info, []byte(`\sv_maxclients\64\g_humanplayers\64\clients\64\`)) {
		t.Errorf("info %q lacks 64 clients", info)
	}
	if FillOf(snapOf(t, doc)) != Full {
		t.Error("64 of 64 is not Full")
	}
}

func TestCaps(t *testing.T) {
	long := strings.Repeat("n", 64)
	var rb strings.Builder
	rb.WriteString("{")
	for i := 0; i < 200; i++ {
		if i > 0 {
			rb.WriteString(",")
		}
		fmt.Fprintf(&rb, `"rule_%03d":%q`, i, strings.Repeat("v", 100))
	}
	rb.WriteString("}")
	doc := `{"name":"Big","map":"m","max_players":4096,"rules":` + rb.String() + `,"players":` +
		playersJSON(4096, func(int) string { return long }) + `}`
	h := handlerFor(t, Config{}, doc)
	ch := strings.Repeat("c", MaxChallenge)
	got, _ := serve(t, h, q3+"getstatus "+ch)
	if len(got) > MaxReply {
		t.Fatalf("status is %d bytes, over %d", len(got), MaxReply)
	}
	info, players, _ := strings.Cut(string(got[len(statusHeader):]), "\n")
	if len(info) > MaxStatusInfo+challengeRoom {
		t.Errorf("status info string is %d bytes", len(info))
	}
	if !strings.HasSuffix(info, strings.Repeat("v", 100)) {
		t.Errorf("info string ends mid-pair: …%q", info[len(info)-20:])
	}
	n := strings.Count(players, "\n")
	if n < 100 || n >= 4096 || !strings.HasSuffix(players, "\"\n") {
		t.Errorf("%d player lines, last %q", n, players[len(players)-10:])
	}
	got, _ = serve(t, h, q3+"getinfo "+ch)
	if len(got) > MaxReply || !strings.HasSuffix(string(got), `\challenge\`+ch) {
		t.Errorf("info with a long challenge: %d bytes, ends %q", len(got), got[len(got)-20:])
	}
}

func TestFill(t *testing.T) {
	cases := []struct {
		doc  string
		want Fill
	}{
		{`{"max_players":2}`, Empty},
		{`{"max_players":2,"players":{"1":{"name":"a"}}}`, Partial},
		{`{"max_players":2,"players":{"1":{"name":"a"},"2":{"name":"b"}}}`, Full},
		{`{"max_players":0,"players":{"1":{"name":"a"}}}`, Full},
	}
	for _, c := range cases {
		if got := FillOf(snapOf(t, c.doc)); got != c.want {
			t.Errorf("%s: %s, want %s", c.doc, got, c.want)
		}
	}
}

func TestHeartbeat(t *testing.T) {
	if got := string(Heartbeat("DarkPlaces")); got != q3+"heartbeat DarkPlaces\n" {
		t.Errorf("heartbeat %q", got)
	}
	if got := string(Heartbeat("ETFlatline-1")); got != q3+"heartbeat ETFlatline-1\n" {
		t.Errorf("flatline %q", got)
	}
}
