// Package sleep stops a game server while it has no players, keeps
// queryd answering for it, and starts it again when a player arrives,
// never for a query ([sleep], issue 41).
//
// This comment is the reference: the cycle, what wakes a server and what
// never does, the commands, what is held while it wakes, the config keys
// and the metrics. docs/sleep.md shows setups with systemd and Docker.
//
// # The cycle
//
// A server with [sleep] after > 0 goes through these phases (Phase):
//
//	awake     the game server runs with players (people: bots do not count)
//	idle      it runs with none; once it has had none for after, stop runs
//	stopping  stop runs
//	asleep    it is stopped
//	waking    start has run; queryd waits for the game server to answer
//
// queryd takes the game server to run, with no players, when it starts:
// a server nobody joins goes to sleep after after. One that has not
// answered at all ready_timeout after queryd started (queryd restarted
// while it slept) is taken to be asleep: stop runs at once to make sure.
// queryd keeps no state across restarts: asleep after a restart it answers
// [server] (set its name and map there) until the game server next wakes. While the server is
// stopping, asleep or waking its liveness state is "asleep" (feed/doc.go,
// "What queryd answers"): every enabled protocol answers the last state
// it had with 0 players (the same name, map and rules; state.Store.
// SetAsleep), the Quake 3 master heartbeats go on (no flatline), and
// neither the feed nor the [upstream] poller is stale: the game server is
// down on purpose. The poller asks nothing while it is down. Once it is
// awake again, stale_after counts from the wake (activity.Rest).
//
// A stop that fails (non-zero, or past stop_timeout) leaves the game
// server taken to run (idle, its queries answered as before) and stop is
// tried again after after, then twice as long after each failure in a
// row, at most an hour.
//
// # What wakes a server, and what never does
//
// A join wakes it: in relay mode the first game datagram from a player,
// that is a datagram no enabled protocol claims (a query is claimed and
// answered by queryd itself, so no query of any enabled protocol ever
// wakes it); in divert mode the XDP program's report of a game datagram to
// the game server's address (see "Divert"); for any server, the feed's
// {"op":"wake"} (socket, or POST /v1/wake), which a game's matchmaking
// sends before it sends players.
//
// Nothing else wakes it: not a query of any protocol queryd knows, on or
// off (one that is on is answered by queryd; one that is off, relayed to
// the game server while it runs, is dropped while it sleeps: counted as
// queryd_sleep_dropped_total{reason="query"}), not a feed replace, patch,
// ping or get, not the [upstream] poll, not a master's getinfo.
// And at most wakes_per_hour wakes begin in any hour, whatever asks (a
// join, the feed): a flood of spoofed game datagrams from any number of
// sources starts the game server at most that many times an hour; past
// it the datagrams are dropped (no_wake) and the feed's wake gets an
// error, until the oldest wake of the hour is an hour old. start never
// runs in a loop.
//
// # Waking
//
// A wake runs start (bounded by ready_timeout: past it start is killed,
// with its process group). It is done once start has exited 0 and the game
// server has answered: with [upstream], its first answer to the poll after
// the wake began (the poller is asked at once, then every 250 ms); without,
// its feeder's first activity (an accepted replace or patch, or a ping)
// after the wake began. Then the state has its players again, the
// datagrams held are passed to the game server in the order they came, and
// the server is idle: if nobody plays within after, it sleeps again.
//
// A wake that fails (start exits non-zero: start_failed; start still
// running at ready_timeout: start_timeout; start exited 0 and the game
// server did not answer by ready_timeout: not_ready) is logged with the
// command's output, counted, shown on the status page, and the held
// datagrams are dropped; stop runs to clean up whatever start left, and
// the server is asleep again, answering as before. The next join may wake
// it again (within wakes_per_hour).
//
// What a player sees while the server wakes: its client's first attempt
// (a Quake 3 getchallenge, a Source A2S_GETCHALLENGE then connect) is
// held, not answered; clients retry every few seconds, and the game
// server answers the held datagrams and the retries once it is up, so the
// join completes within about the game server's start time plus a retry.
// A client that gives up first (or a player who clicks again) gets in on
// its next try.
//
// # Held datagrams
//
// While a server wakes, the game datagrams from each source (an IPv4
// address, or an IPv6 /64) are held: at most hold_per_source datagrams
// and hold_bytes_per_source bytes per source, hold_total and hold_bytes
// of every source together. Past a bound the oldest go first (a source's
// own past its bound, everyone's past the total's; queryd_sleep_dropped_total
// {reason="held_over"}); a datagram's bytes count as the heap holds them.
// The hold costs at most hold_bytes plus about 250 bytes a datagram (its
// record and its source's): 1.3 MiB at the defaults (TestHoldMemory).
//
// # Commands
//
// start and stop are argv arrays: the program (an absolute path, or a name
// found on PATH) and its arguments, run without a shell, in a process
// group of their own, with queryd's environment and user. Their exit
// status and first 4 KiB of output (stdout and stderr) are logged; the
// rest is counted. stop is bounded by stop_timeout and start by
// ready_timeout: past it the whole process group is killed. start must
// return once it has launched the game server (systemctl start, docker
// start do); a program it leaves running that keeps its output open is
// cut off from it 2 s after start exits (its writes then fail: redirect
// them). queryd check says whether each program exists and may be run.
//
// # Divert
//
// In divert mode queryd does not own the game port, so the XDP program
// sees the join: while the server rests (from the stop until the woken
// game server answers: the daemon's Asleep marks its divert addresses
// resting, xdp.Divert.Rest), a game datagram to one of its divert
// addresses (one that passed the kernel's checks and no protocol claims,
// on or off: never a query) is reported to queryd on a ring buffer, at
// most once per address every 10 ms, and the daemon calls Sleeper.Join
// with its source (xdp.Divert.OnJoin). Nothing is held: the datagram goes
// on to the game server's address as any game traffic does, where nothing
// listens until the game server is up (the kernel answers ICMP port
// unreachable, which the game clients' unconnected sockets ignore), and
// the player's retries get in once it is up. wakes_per_hour bounds the
// wakes as in relay mode: a spoofed flood of game datagrams from any number
// of sources starts the game server at most that often (the reports
// themselves at most 100 a second per address). A join is seen only on the
// [xdp] interfaces (queryd check warns): a player arriving through
// another interface (loopback, an interface not listed) wakes nothing.
// Counted in queryd_xdp_divert_joins_total{result} (reported, ring_full,
// rate_limited).
//
// # Config
//
// The sleep section of queryd.toml (defaults shown; a change needs a
// restart). [sleep] needs a way to see a player arrive (relay mode, divert,
// or a [feed] table for the matchmaking's wake) and to know the game server
// is up ([upstream], or a feeder with a [feed] table), and is refused with
// [agones] (Agones runs that game server's life).
//
//	[sleep]
//	after = "0s"                   # no players this long: stop; 0s: never (sleep off); 1s to 30 days
//	start = []                     # e.g. ["systemctl", "start", "mygame@1"]: argv, no shell
//	stop = []                      # e.g. ["systemctl", "stop", "mygame@1"]
//	ready_timeout = "60s"          # a wake must be done by then (bounds start); 1s to 1h
//	stop_timeout = "60s"           # bounds stop; 1s to 1h
//	wakes_per_hour = 6             # wakes begun in any hour, whatever asks; 1 to 3600
//	hold_per_source = 32           # datagrams held per source while waking; 1 to 65536
//	hold_bytes_per_source = "64KiB"
//	hold_total = 1024              # every source together
//	hold_bytes = "1MiB"
//
// wakes_per_hour = 6 lets a server that sleeps after 15 minutes wake for
// every group of players that comes (it cannot wake more than 4 times an
// hour then: each wake keeps it up at least after), while a spoofed flood
// starts it at most 6 times an hour.
//
// # Metrics
//
// Registered when [sleep] is on (docs/metrics.md):
//
//	queryd_sleep_phase{phase}                       1 for the phase now: awake, idle, stopping, asleep, waking
//	queryd_sleep_asleep_since_timestamp_seconds     when the rest began (0 while the game server runs)
//	queryd_sleep_wakes_total{cause}                 wakes begun: join, feed
//	queryd_sleep_wake_failures_total{reason}        start_failed, start_timeout, not_ready
//	queryd_sleep_wakes_refused_total                wakes asked past wakes_per_hour
//	queryd_sleep_stops_total{result}                ok, failed
//	queryd_sleep_wake_seconds                       a good wake's time, start to the first answer
//	queryd_sleep_held_datagrams, queryd_sleep_held_bytes
//	queryd_sleep_dropped_total{reason}              held_over, no_wake, wake_failed, query
//
// and the server's queryd_server_state{state="asleep"} (daemon).
package sleep
