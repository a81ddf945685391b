package interop

import (
	"testing"
	"time"

	rfa2s "github.com/rumblefrog/go-a2s"
)

// upstreamBack is the "stock" game server: a queryd answering A2S only.
var upstreamBack = Options{Protocols: map[string]map[string]any{"a2s": nil}}

// startFront starts a queryd in front of back ([upstream] protocol = "a2s")
// answering A2S, GameSpy4, SAGL and Quake 3, and waits until it serves the
// back's players (n of them).
func startFront(t *testing.T, back *Daemon, n int) *Daemon {
	t.Helper()
	front := StartDaemon(t, Options{
		Protocols: map[string]map[string]any{
			"a2s":      nil,
			"gamespy4": {"hostport": gs4HostPort, "hostip": "127.0.0.1"},
			"sagl":     nil,
			"quake3":   {"gamename": "interop", "protocol": 84},
		},
		Tables: map[string]map[string]any{
			"upstream": {"protocol": "a2s", "address": back.UDPAddr, "interval": "500ms", "timeout": "1s"},
		},
	})
	deadline := time.Now().Add(15 * time.Second)
	for {
		if c, err := rfa2s.NewClient(front.UDPAddr, rfa2s.TimeoutOption(300*time.Millisecond)); err == nil {
			info, err := c.QueryInfo()
			c.Close()
			if err == nil && int(info.Players) == n {
				return front
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the front does not serve the back's %d players within 15 s", n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestUpstreamA2SClients: the real A2S clients ask a queryd in front of a
// stock A2S server fed the rich state (48 players, 220 rules): they see the
// stock server's players, scores, durations, bots and rules (its own and
// no others), with split PLAYER and RULES replies made by the front.
func TestUpstreamA2SClients(t *testing.T) {
	back := StartDaemon(t, upstreamBack)
	st := RichState()
	back.Replace(t, st.Doc())
	front := startFront(t, back, len(st.Players))
	shown := st

	t.Run("daemon_splits_rules", func(t *testing.T) { checkRulesSplit(t, front.UDPAddr, shown) })
	t.Run("qstat", func(t *testing.T) { clientCheck(t, "qstat", "front"); checkQstat(t, front.UDPAddr, shown) })
	t.Run("gamedig_valve", func(t *testing.T) {
		clientCheck(t, "gamedig_valve", "front")
		checkGamedigValve(t, front.UDPAddr, shown)
	})
	t.Run("go_rumblefrog_go-a2s", func(t *testing.T) {
		clientCheck(t, "go_rumblefrog_go-a2s", "front")
		checkRumblefrog(t, front.UDPAddr, shown)
	})
	t.Run("go_woozymasta_a2s", func(t *testing.T) {
		clientCheck(t, "go_woozymasta_a2s", "front")
		checkWoozymasta(t, front.UDPAddr, shown)
	})
}

// TestUpstreamGameSpy4Clients: the real GameSpy4 / Minecraft Query clients
// ask a queryd in front of a stock A2S server fed gs4State. The stock
// server's game port (A2S EDF) is the front's hostport.
func TestUpstreamGameSpy4Clients(t *testing.T) {
	back := StartDaemon(t, Options{Protocols: map[string]map[string]any{"a2s": {"game_port": gs4HostPort}}})
	st := gs4State()
	back.Replace(t, st.Doc())
	front := startFront(t, back, len(st.Players))
	host, port := "127.0.0.1", front.UDPPort
	shown := st

	t.Run("qstat_gs4", func(t *testing.T) { clientCheck(t, "qstat_gs4", "front"); gs4Qstat(t, front.UDPAddr, shown) })
	t.Run("gamedig_gamespy3", func(t *testing.T) { clientCheck(t, "gamedig_gamespy3", "front"); gs4Gamedig(t, front.UDPAddr, shown) })
	t.Run("npm_minecraft-server-util_queryFull", func(t *testing.T) {
		clientCheck(t, "npm_minecraft-server-util_queryFull", "front")
		gs4McsuFull(t, host, port, shown)
	})
	t.Run("go_minequery_full_strict", func(t *testing.T) {
		clientCheck(t, "go_minequery_full_strict", "front")
		gs4MinequeryFull(t, host, port, shown)
	})
	t.Run("go_mcutils_full", func(t *testing.T) { clientCheck(t, "go_mcutils_full", "front"); gs4McutilsFull(t, host, port, shown) })
}

// TestUpstreamQuake3Clients: qstat and gamedig ask Quake 3 of a queryd in
// front of a stock A2S server fed q3State (its bot connected longest, as
// the INFO bot count marks it).
func TestUpstreamQuake3Clients(t *testing.T) {
	back := StartDaemon(t, upstreamBack)
	st := q3State()
	for i := range st.Players {
		st.Players[i].Time = 100 + float64(i)
		if st.Players[i].Bot {
			st.Players[i].Time = 90000
		}
	}
	back.Replace(t, st.Doc())
	front := startFront(t, back, len(st.Players))

	t.Run("qstat_q3s", func(t *testing.T) { clientCheck(t, "qstat_q3s", "front"); q3Qstat(t, "-q3s", front.UDPAddr, st) })
	t.Run("gamedig_quake3", func(t *testing.T) {
		clientCheck(t, "gamedig_quake3", "front")
		q3Gamedig(t, "quake3", front.UDPAddr, st)
	})
	t.Logf("front %s polls back %s every 500 ms", front.UDPAddr, back.UDPAddr)
}
