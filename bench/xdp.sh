#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/xdp.sh — queryd's socket path against its XDP fast path and a bare
# XDP_TX echo, same generator, same veth pair, A B C alternation (see
# bench/README.md, "XDP").
#
# Makes two network namespaces joined by a veth pair (198.18.0.0/15, the
# benchmarking range, exists only there), runs queryd in one and the raw
# frame generator (queryd-bench flood) in the other, and removes both on
# exit. Needs root. Every load is bounded: RUNS <= 20, DURATION <= 60 s.
#
#   bench/xdp.sh                       # RUNS=5 DURATION=10s, both loads, ~7 minutes
#   RUNS=3 DURATION=5s LOADS=spoof bench/xdp.sh
#   RUNS=3 DURATION=5s LOADS="token spoof spoof6" PATHS="xdp echo" bench/xdp.sh
#   HOST=50 SPREAD=50 LOADS=token bench/xdp.sh   # host mode: 50 servers
#
# Loads: token (A2S_INFO with valid tokens from 16 addresses), spoof
# (token-less A2S_INFO from 4,096 random spoofed IPv4 sources: challenges),
# spoof6 (the same from SPOOFED distinct spoofed IPv6 sources, a /64 each,
# default 1,048,576, each sent once a round: every frame is from a source
# no per-source table of fewer entries holds, as in a real spoofed flood;
# fd00:5164:7864::/64 on the veth, fd00:5165::/32 routed over it, only
# inside the namespaces; queryd also listens on [::] for it).
#
# Paths: socket (queryd, [xdp] off), xdp (queryd, the fast path on the
# server's veth), echo (no queryd: bench/xdpecho's bare XDP_TX echo, which
# sends each request back with its addresses swapped; spoof loads only, the
# token load needs queryd's tokens). The echo is the ceiling of what any
# XDP program can answer on this veth and generator: the fast path's
# challenge path is compared with it. echo-state: the same echo, which
# first adds one to the source's slot in a table of 65,536 cache lines
# (xdpecho -per-source): the least any program with per-source budgets and
# counts does per frame; what is left between the fast path and it is the
# program's own work. BASE=REV adds a path "base": queryd
# built from git revision REV with the fast path on (spoof loads only), to
# measure what the program's later checks cost. With bpf statistics on
# (kernel.bpf_stats_enabled, for the run only; every arm pays the same two
# clock reads per frame) each line also gives the XDP program's own
# prog_ns_per_frame (run_time_ns / run_cnt from /proc/PID/fdinfo).
# QUERYD=PATH measures that binary instead of one built from this tree.
# HOST=N runs queryd in host mode, N servers from N files (server i on port
# 27015+i); SPREAD=M (token load) adds the paths socket-spread and
# xdp-spread, whose frames go to M servers (queryd-bench flood -ports M),
# to compare with socket and xdp, which send to the first server only.
# PATHS="xdp echo" runs only those paths (default: every path that applies).
# RATE=N offers N frames/s (paced) instead of as many as the generator can
# send: every path then gets the same load, which it answers in full when
# it can (HOST=50 SPREAD=50 RATE=150000: one server against 50 at the same
# offered load, none saturated). WORKERS=N sets [listen] workers (sockets
# per address) in every server's file (default: queryd's, one per CPU).
# SOCKET=batch|uring|portable sets [listen] socket the same way.
# The proven-source tier (spoof loads only): xdp-tier and socket-tier are
# xdp and socket with [limits] unproven_packet_rate = TIER_RATE (default
# 1000; every other path runs with 0, no gate, so that it answers every
# frame): past the gate the flood is dropped before any reply work, so
# xdp-tier's prog_ns_per_frame is the program's cost per dropped frame
# against xdp's per challenge sent. PROVEN=N (default 100) adds, on the
# tier paths, a client on 198.18.0.2 that proved its address before the
# flood and asks A2S_INFO N times a second during it (a challenge, then
# the token query): proven_share is its answered share. PROVEN_ALL=1 runs
# that client on the socket and xdp paths' spoof loads too (no tier: the
# comparison).
set -euo pipefail

RUNS=${RUNS:-5}
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-1s}
LOADS=${LOADS:-"token spoof"}
THREADS=${THREADS:-1}
MODE=${MODE:-native}
BASE=${BASE:-}
HOST=${HOST:-0}
SPREAD=${SPREAD:-0}
PATHS=${PATHS:-"socket xdp echo echo-state base socket-spread xdp-spread xdp-tier socket-tier"}
TIER_RATE=${TIER_RATE:-1000}
PROVEN=${PROVEN:-100}
PROVEN_ALL=${PROVEN_ALL:-0}
RATE=${RATE:-0}
WORKERS=${WORKERS:-}
SOCKET=${SOCKET:-}
SPOOFED=${SPOOFED:-1048576}

[ "$(id -u)" = 0 ] || { echo "bench/xdp.sh: needs root (network namespaces, XDP)"; exit 1; }
[ "$RUNS" -ge 1 ] && [ "$RUNS" -le 20 ] || { echo "RUNS must be 1 to 20"; exit 1; }
secs=${DURATION%s}
[ "$secs" -ge 1 ] && [ "$secs" -le 60 ] || { echo "DURATION must be 1s to 60s"; exit 1; }
[ "$HOST" -ge 0 ] && [ "$HOST" -le 256 ] || { echo "HOST must be 0 to 256 servers"; exit 1; }
[ "$SPREAD" -ge 0 ] && [ "$SPREAD" -le "$HOST" ] || { echo "SPREAD must be 0 to HOST"; exit 1; }
[ "$SPOOFED" -ge 1 ] && [ "$SPOOFED" -le 4194304 ] || { echo "SPOOFED must be 1 to 4194304 sources"; exit 1; }
[ "$RATE" -ge 0 ] && [ "$RATE" -le 10000000 ] || { echo "RATE must be 0 (unpaced) to 10000000 frames/s"; exit 1; }
[ "$TIER_RATE" -ge 1 ] && [ "$TIER_RATE" -le 10000000 ] || { echo "TIER_RATE must be 1 to 10000000 requests/s"; exit 1; }
[ "$PROVEN" -ge 0 ] && [ "$PROVEN" -le 1000 ] || { echo "PROVEN must be 0 to 1000 queries/s"; exit 1; }
[ -z "$WORKERS" ] || { [ "$WORKERS" -ge 1 ] && [ "$WORKERS" -le 64 ]; } || { echo "WORKERS must be 1 to 64"; exit 1; }
workers_line=""
[ -n "$WORKERS" ] && workers_line="workers = $WORKERS"
case "$SOCKET" in "" | batch | uring | portable) ;; *) echo "SOCKET must be batch, uring or portable"; exit 1 ;; esac
[ -n "$SOCKET" ] && workers_line="$workers_line
socket = \"$SOCKET\""

cd "$(dirname "${BASH_SOURCE[0]}")/.."
work=$(mktemp -d)
id=$$
srv=qdb-s$id cli=qdb-c$id sif=qdbs$id cif=qdbc$id
qpid=""
stats_was=""
cleanup() {
	[ -n "$qpid" ] && kill "$qpid" 2>/dev/null && wait "$qpid" 2>/dev/null || true
	[ -n "$stats_was" ] && sysctl -qw kernel.bpf_stats_enabled="$stats_was" || true
	ip netns del "$srv" 2>/dev/null || true
	ip netns del "$cli" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

if [ -n "${QUERYD:-}" ]; then cp "$QUERYD" "$work/queryd"; else go build -o "$work/queryd" ./cmd/queryd; fi
go build -o "$work/queryd-bench" ./cmd/queryd-bench
go build -o "$work/xdpecho" ./bench/xdpecho
if [ -n "$BASE" ]; then
	mkdir "$work/base"
	git archive "$BASE" | tar -x -C "$work/base"
	(cd "$work/base" && go build -o "$work/queryd-base" ./cmd/queryd)
fi
stats_was=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -qw kernel.bpf_stats_enabled=1

ip netns add "$srv"
ip netns add "$cli"
ip link add "$sif" netns "$srv" type veth peer name "$cif" netns "$cli"
ip -n "$srv" addr add 198.18.0.1/24 dev "$sif"
ip -n "$cli" addr add 198.18.0.2/24 dev "$cif"
for i in $(seq 1 16); do ip -n "$cli" addr add "198.18.1.$i/32" dev "$cif"; done
for ns in "$srv" "$cli"; do ip -n "$ns" link set lo up; done
ip -n "$srv" link set "$sif" up
ip -n "$cli" link set "$cif" up
# Answers to the token clients and to the spoofed sources go back over the veth.
ip -n "$srv" route add 198.18.1.0/24 via 198.18.0.2
ip -n "$srv" route add 198.18.128.0/17 via 198.18.0.2
# spoof6: the IPv6 link and the spoofed sources' /32 routed over it.
ip -n "$srv" addr add fd00:5164:7864::1/64 dev "$sif" nodad
ip -n "$cli" addr add fd00:5164:7864::2/64 dev "$cif" nodad
ip -n "$srv" -6 route add fd00:5165::/32 via fd00:5164:7864::2
# The answers to them end on the client side in a blackhole (no ICMPv6
# unreachable per answer, which cost the client kernel a route lookup, a
# peer entry per source and an ICMP error, in every arm alike).
ip -n "$cli" -6 route add blackhole fd00:5165::/32
smac=$(ip -n "$srv" -o link show "$sif" | grep -o 'link/ether [0-9a-f:]*' | cut -d' ' -f2)

# server_tables PORT SOCKET NAME: one server's tables (per-IP budget 1 GiB/s,
# unproven 4 GiB/s, the tier's gate $tier_rate (0: none), stale check on).
tier_rate=0
server_tables() {
	cat <<EOF
[listen]
udp = ["0.0.0.0:$1"${listen6:+, \"[::]:$1\"}]
recv_buffer = "4MiB"
$workers_line

[feed]
socket = "$2"
stale_after = "10m"

[limits]
per_ip_rate = "1GiB"
per_ip_burst = "1MiB"
unproven_rate = "4GiB"
unproven_burst = "1MiB"
unproven_packet_rate = $tier_rate
unproven_packet_burst = $((tier_rate / 10 + 1))

[server]
name = "$3"
map = "bench_map"
max_players = 64
EOF
}

# host_tables IFACES: the host-wide tables, with the [xdp] interfaces value.
host_tables() {
	cat <<EOF

[admin]
listen = ""

[log]
level = "info"

[xdp]
interfaces = $1
mode = "$MODE"
EOF
}

config() { # $1: the [xdp] interfaces value
	[ "$HOST" -gt 0 ] && { host_config "$1"; return; }
	{ server_tables 27015 "$work/feed.sock" "queryd benchmark"; host_tables "$1"; } >"$work/queryd.toml"
}

# host_config IFACES: host mode, HOST servers from servers.d/ (server i on
# port 27015+i, named "queryd benchmark i"), the same tables otherwise.
host_config() {
	rm -rf "$work/servers.d"
	mkdir -p "$work/servers.d"
	{ host_tables "$1"; printf '\n[servers]\ninclude = ["servers.d/*.toml"]\n'; } >"$work/queryd.toml"
	local i name
	for ((i = 0; i < HOST; i++)); do
		name=$(printf 's%03d' "$i")
		server_tables $((27015 + i)) "$work/$name.sock" "queryd benchmark $i" >"$work/servers.d/$name.toml"
	done
}

start_queryd() { # $1: socket, xdp, echo or echo-state (with HOST: socket-spread, xdp-spread too; xdp-tier, socket-tier)
	if [ "$1" = echo ] || [ "$1" = echo-state ]; then
		flags=""
		[ "$1" = echo-state ] && flags="-per-source"
		ip netns exec "$srv" "$work/xdpecho" $flags "$sif" >"$work/echo.log" 2>&1 &
		qpid=$!
		for _ in $(seq 1 50); do
			grep -q 'XDP echo attached' "$work/echo.log" && return
			sleep 0.1
		done
		echo "xdpecho did not attach:"; cat "$work/echo.log"; exit 1
	fi
	bin="$work/queryd"
	[ "$1" = base ] && bin="$work/queryd-base"
	tier_rate=0
	[[ $1 == *-tier ]] && tier_rate=$TIER_RATE
	case $1 in socket*) config "[]" ;; *) config "[\"$sif\"]" ;; esac
	ip netns exec "$srv" "$bin" -config "$work/queryd.toml" </dev/null 2>"$work/queryd-$1.log" &
	qpid=$!
	if [ "$HOST" -gt 0 ]; then # the servers answer [server]'s state, unfed
		for _ in $(seq 1 100); do
			[ -S "$work/$(printf 's%03d' $((HOST - 1))).sock" ] && break
			sleep 0.1
		done
		if [[ $1 == xdp* ]]; then
			for _ in $(seq 1 100); do
				grep -q 'XDP fast path \(on\|off\)' "$work/queryd-$1.log" && break
				sleep 0.1
			done
			grep -q 'XDP fast path on' "$work/queryd-$1.log" ||
				{ echo "queryd did not attach XDP:"; grep -v msg=listening "$work/queryd-$1.log"; exit 1; }
		fi
		return
	fi
	for _ in $(seq 1 50); do
		[ -S "$work/feed.sock" ] && break
		sleep 0.1
	done
	printf '{"op":"replace","state":{"name":"queryd benchmark server","map":"de_bench","game":"Benchmark","folder":"bench","version":"1.0.0","max_players":64,"players":{"0":{"name":"Thomas","score":12,"ping":31}}}}\n' |
		"$work/queryd" push -socket "$work/feed.sock" >/dev/null
	if [[ $1 != socket* ]] && ! grep -q 'XDP fast path attached' "$work/queryd-$1.log"; then
		echo "queryd did not attach XDP:"; cat "$work/queryd-$1.log"; exit 1
	fi
}

# prog_ns: the XDP programs of process $1, "run_time_ns run_cnt" summed.
prog_ns() {
	local t=0 c=0 f
	for f in /proc/"$1"/fdinfo/*; do
		grep -qE '^prog_type:[[:space:]]+6$' "$f" 2>/dev/null || continue
		t=$((t + $(awk '/^run_time_ns:/ {print $2}' "$f")))
		c=$((c + $(awk '/^run_cnt:/ {print $2}' "$f")))
	done
	echo "$t $c"
}

stop_queryd() {
	kill "$qpid"
	wait "$qpid" || true
	qpid=""
}

echo "bench/xdp.sh: RUNS=$RUNS DURATION=$DURATION LOADS=\"$LOADS\" RATE=$RATE WORKERS=${WORKERS:-default} MODE=$MODE, $(nproc) CPUs, $(uname -r)" >&2
results="$work/results"
listen6=""
for run in $(seq 1 "$RUNS"); do
	for load in $LOADS; do
		listen6=""
		[ "$load" = spoof6 ] && listen6=1
		for path in socket xdp echo echo-state base socket-spread xdp-spread xdp-tier socket-tier; do
			[[ " $PATHS " == *" $path "* ]] || continue
			[[ $path == echo* ]] && [[ $load != spoof* ]] && continue
			[ "$path" = base ] && { [ -z "$BASE" ] || [[ $load != spoof* ]]; } && continue
			[[ $path == *-spread ]] && { [ "$SPREAD" -eq 0 ] || [ "$load" != token ]; } && continue
			[[ $path == *-tier ]] && { [[ $load != spoof* ]] || [ "$HOST" -gt 0 ]; } && continue
			proven=0
			[[ $path == *-tier ]] && proven=$PROVEN
			[ "$PROVEN_ALL" = 1 ] && [[ $load == spoof* ]] && { [ "$path" = xdp ] || [ "$path" = socket ]; } && proven=$PROVEN
			ports=1
			[[ $path == *-spread ]] && ports=$SPREAD
			start_queryd "$path"
			read -r t0 c0 < <(prog_ns "$qpid")
			line=$(ip netns exec "$cli" "$work/queryd-bench" flood -iface "$cif" -dst-mac "$smac" -mode "$load" -ports "$ports" -spoofed "$SPOOFED" \
				-duration "$DURATION" -warmup "$WARMUP" -threads "$THREADS" -rate "$RATE" -pid "$qpid" -proven "$proven")
			read -r t1 c1 < <(prog_ns "$qpid")
			stop_queryd
			pns=0
			[ "$((c1 - c0))" -gt 0 ] && pns=$(awk -v t=$((t1 - t0)) -v c=$((c1 - c0)) 'BEGIN { printf "%.1f", t / c }')
			echo "run=$run path=$path $line prog_ns_per_frame=$pns" | tee -a "$results" >&2
		done
	done
done

# Medians per load and path, and the ratios xdp / socket.
awk '
function med(arr, n,   i, j, t) {
	for (i = 2; i <= n; i++) { t = arr[i]; for (j = i - 1; j >= 1 && arr[j] > t; j--) arr[j + 1] = arr[j]; arr[j + 1] = t }
	return n % 2 ? arr[(n + 1) / 2] : (arr[n / 2] + arr[n / 2 + 1]) / 2
}
# paired prints the machine CPU per answer of path a over that of path b
# run by run (the i-th run of each: minutes apart at most, where the
# medians of a round may be far apart), their median and range, and how
# many runs are within 1.10x. (No apostrophes in here: the program is a
# single-quoted shell word.)
function paired(l, a, b,   i, m, r, lo, hi, ok) {
	m = n[l SUBSEP a] < n[l SUBSEP b] ? n[l SUBSEP a] : n[l SUBSEP b]
	if (!m) return
	lo = 1e9; hi = 0; ok = 0
	for (i = 1; i <= m; i++) {
		r[i] = mcpu[l SUBSEP a, i] / mcpu[l SUBSEP b, i]
		if (r[i] < lo) lo = r[i]
		if (r[i] > hi) hi = r[i]
		if (r[i] <= 1.10) ok++
	}
	printf "%-6s %s/%s run by run: machine CPU per answer median %.2fx (%.2f-%.2f), %d of %d runs <= 1.10x\n", l, a, b, med(r, m), lo, hi, ok, m
}
{
	for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
	k = v["mode"] SUBSEP v["path"]; n[k]++
	ans[k, n[k]] = v["answered_per_s"]; off[k, n[k]] = v["offered_per_s"]
	mcpu[k, n[k]] = v["machine_cpu_us_per_answer"]; scpu[k, n[k]] = v["server_cpu_us_per_answer"]; sirq[k, n[k]] = v["softirq_us_per_answer"]
	pns[k, n[k]] = v["prog_ns_per_frame"]; psh[k, n[k]] = v["proven_share"]
	loads[v["mode"]] = 1
}
END {
	printf "%-6s %-13s %12s %12s %10s %10s %10s %10s\n", "load", "path", "answers/s", "offered/s", "machine", "softirq", "server", "prog_ns"
	split("socket xdp echo echo-state base socket-spread xdp-spread xdp-tier socket-tier", paths, " ")
	for (l in loads) {
		for (p = 1; p <= 9; p++) {
			path = paths[p]; k = l SUBSEP path; m = n[k]
			if (!m) continue
			for (i = 1; i <= m; i++) { a[i] = ans[k, i]; o[i] = off[k, i]; c[i] = mcpu[k, i]; s[i] = scpu[k, i]; q[i] = sirq[k, i]; r[i] = pns[k, i] }
			A[path] = med(a, m); C[path] = med(c, m); P[path] = med(r, m)
			printf "%-6s %-13s %12.0f %12.0f %10.3f %10.3f %10.3f %10.1f\n", l, path, A[path], med(o, m), C[path], med(q, m), med(s, m), P[path]
			if (path ~ /-tier$/ || psh[k, 1] != "") {
				for (i = 1; i <= m; i++) h[i] = psh[k, i]
				S[path] = med(h, m)
			}
		}
		if (n[l SUBSEP "xdp-tier"] && n[l SUBSEP "xdp"])
			printf "%-6s the tier: program ns per frame, flood dropped %.1f against challenged %.1f (%.2fx); proven client answered %.2f %%\n", l, P["xdp-tier"], P["xdp"], P["xdp-tier"] / P["xdp"], 100 * S["xdp-tier"]
		if (n[l SUBSEP "socket-tier"])
			printf "%-6s the tier on the socket path: proven client answered %.2f %%\n", l, 100 * S["socket-tier"]
		for (p = 1; p <= 2; p++) {
			path = p == 1 ? "xdp" : "socket"
			if (n[l SUBSEP path] && S[path] != "")
				printf "%-6s no tier, %s: proven client answered %.2f %%\n", l, path, 100 * S[path]
		}
		if (n[l SUBSEP "base"])
			printf "%-6s the checks since %s: %.1f ns per frame in the program (xdp %.1f - base %.1f)\n", l, base, P["xdp"] - P["base"], P["xdp"], P["base"]
		if (n[l SUBSEP "socket"] && n[l SUBSEP "xdp"])
			printf "%-6s xdp/socket: answers/s %.2fx, machine CPU per answer %.2fx (target >= 1.8x, <= 0.6x)\n", l, A["xdp"] / A["socket"], C["xdp"] / C["socket"]
		for (p = 1; p <= 2; p++) { # spread over SPREAD servers against one, each path that ran both arms
			one = p == 1 ? "socket" : "xdp"; sp = one "-spread"
			if (!n[l SUBSEP one] || !n[l SUBSEP sp]) continue
			printf "%-6s %s spread/one (%d servers): answers/s %.3fx, machine CPU per answer %.3fx (target 0.9-1.1)\n", l, one, spread, A[sp] / A[one], C[sp] / C[one]
			paired(l, sp, one)
		}
		if (n[l SUBSEP "echo"] && n[l SUBSEP "xdp"]) {
			printf "%-6s xdp/echo: answers/s %.2fx, machine CPU per answer %.2fx (target >= 0.90x, <= 1.10x)\n", l, A["xdp"] / A["echo"], C["xdp"] / C["echo"]
			paired(l, "xdp", "echo")
		}
		if (n[l SUBSEP "echo-state"] && n[l SUBSEP "xdp"]) {
			printf "%-6s xdp/echo-state: answers/s %.2fx, machine CPU per answer %.2fx (the fast path against an echo that touches one line of per-source state)\n", l, A["xdp"] / A["echo-state"], C["xdp"] / C["echo-state"]
			paired(l, "xdp", "echo-state")
		}
		if (n[l SUBSEP "echo"] && n[l SUBSEP "echo-state"])
			paired(l, "echo-state", "echo")
		delete A; delete C; delete P; delete S
	}
}' base="$BASE" spread="$SPREAD" "$results"
