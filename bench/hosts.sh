#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/hosts.sh — host mode at scale (issue 26; bench/README.md, "Host
# mode"): one queryd running SERVERS servers from SERVERS included files
# ([servers] include = ["servers.d/*.toml"]), against a queryd running one
# server the same way, on loopback only. It measures:
#   start   launch to every server answering A2S_INFO and GameSpy4 with its
#           own name (bench/hostcheck wait; target <= 5 s for 200);
#   rss     VmRSS with every server fed once and idle, per server above the
#           one-server queryd (target <= 1 MiB per server);
#   idle    the idle queryd's CPU over IDLE seconds (target <= 2 % of a core);
#   spread  token-bearing A2S_INFO from SOURCES sources spread over SPREAD
#           servers of the big queryd ("spread"), against the same load on
#           its first server alone ("one", same process) and on the small
#           queryd's one server ("single"), alternating (RUNS times):
#           answers/s, machine CPU per answer (/proc/stat, both cores,
#           generator included) and queryd's CPU per answer (target: spread
#           within 10 % of one);
#   sighup  a new server file and SIGHUP while one A2S_INFO client per
#           running server asks in a loop: queries lost on the running
#           servers (target 0), and the time until the new one answers.
# The XDP path of the spread load is not measured here (see bench/README.md).
#
# Settings (environment):
#   SERVERS=200   servers of the big queryd (at most 256, config.MaxServers)
#   SPREAD=50     servers the spread load goes to (at most SERVERS)
#   RUNS=3 DURATION=5s WARMUP=1s SOURCES=50 INFLIGHT=16   the spread load
#   IDLE=10       seconds of idle CPU measured
#   SOCKET= WORKERS=0   every server's [listen] socket ("" the default:
#                 batch on Linux; uring or portable) and workers
#   PORT=24000    (below the ephemeral range, which clients' sockets take
#                 from) the big queryd's server i listens on PORT+i, the small
#                 one's on PORT-100; admin listeners on PORT-2 and PORT-1
#   QUERYD=       a queryd binary to measure (default: built from this tree)
#   KEEP=0        1 keeps the work directory (configs, logs, raw results)
# Every load is bounded: RUNS <= 10, DURATION <= 60 s, IDLE <= 60 s; the
# processes it started are stopped on exit (by pid), also on Ctrl-C.
set -euo pipefail

SERVERS=${SERVERS:-200}
SPREAD=${SPREAD:-50}
RUNS=${RUNS:-3}
DURATION=${DURATION:-5s}
WARMUP=${WARMUP:-1s}
SOURCES=${SOURCES:-50}
INFLIGHT=${INFLIGHT:-16}
IDLE=${IDLE:-10}
PORT=${PORT:-24000}
SOCKET=${SOCKET:-}
WORKERS=${WORKERS:-0}
QUERYD=${QUERYD:-}
KEEP=${KEEP:-0}

die() { echo "bench/hosts.sh: $*" >&2; exit 1; }
[[ $SERVERS =~ ^[0-9]+$ && $SERVERS -ge 2 && $SERVERS -le 256 ]] || die "SERVERS=$SERVERS: want 2 to 256"
[[ $SPREAD =~ ^[0-9]+$ && $SPREAD -ge 1 && $SPREAD -le $SERVERS ]] || die "SPREAD=$SPREAD: want 1 to SERVERS"
[[ $RUNS =~ ^[0-9]+$ && $RUNS -ge 1 && $RUNS -le 10 ]] || die "RUNS=$RUNS: want 1 to 10"
secs=${DURATION%s}
[[ $secs =~ ^[0-9]+$ && $secs -ge 1 && $secs -le 60 ]] || die "DURATION=$DURATION: want 1s to 60s"
[[ $IDLE =~ ^[0-9]+$ && $IDLE -ge 1 && $IDLE -le 60 ]] || die "IDLE=$IDLE: want 1 to 60"
[[ $SOCKET == "" || $SOCKET == batch || $SOCKET == uring || $SOCKET == portable ]] || die "SOCKET=$SOCKET: want batch, uring, portable or empty"
[[ $WORKERS =~ ^[0-9]+$ && $WORKERS -le 64 ]] || die "WORKERS=$WORKERS: want 0 to 64"
[[ $PORT =~ ^[0-9]+$ && $PORT -ge 1200 && $((PORT + SERVERS)) -le 65535 ]] || die "PORT=$PORT: want 1200 up, PORT+SERVERS at most 65535"

root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/queryd-hosts.XXXXXX")
big= small= watcher=

stop() { # stop PID...: end the processes this script started, by pid
	local p
	for p in "$@"; do
		[[ -n $p ]] && kill "$p" 2>/dev/null || true
	done
	for p in "$@"; do
		[[ -n $p ]] && wait "$p" 2>/dev/null || true
	done
}
cleanup() {
	stop "$watcher" "$big" "$small"
	if [[ $KEEP == 1 ]]; then echo "work directory kept: $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "building ..." >&2
if [[ -z $QUERYD ]]; then
	(cd "$root" && go build -o "$work/queryd" ./cmd/queryd)
	QUERYD=$work/queryd
fi
(cd "$root" && go build -o "$work/queryd-bench" ./cmd/queryd-bench && go build -o "$work/hostcheck" ./bench/hostcheck)
hc=$work/hostcheck

# host DIR ADMIN_PORT FIRST_PORT N: a main file (host-wide tables only) and
# N server files servers.d/s000.toml ..., server i on FIRST_PORT+i, named
# bench-%03d, its socket DIR/run/s%03d.sock, budgets out of the load's way
# (bench/run.sh's).
server_file() { # DIR PORT I
	cat >"$1/servers.d/$(printf 's%03d' "$3").toml" <<EOF
[listen]
udp = ["127.0.0.1:$2"]
recv_buffer = "4MiB"
socket = "$SOCKET"
workers = $WORKERS

[feed]
socket = "$1/run/$(printf 's%03d' "$3").sock"
stale_after = "10m"

[limits]
per_ip_rate = "1GiB"
per_ip_burst = "1MiB"
unproven_rate = "4GiB"
unproven_burst = "1MiB"

[server]
name = "$(printf 'bench-%03d' "$3")"
map = "bench_map"
max_players = 16
EOF
}
host() {
	local dir=$1 i
	mkdir -p "$dir/servers.d" "$dir/run"
	cat >"$dir/main.toml" <<EOF
[admin]
listen = "127.0.0.1:$2"

[log]
level = "warn"

[servers]
include = ["servers.d/*.toml"]
EOF
	for ((i = 0; i < $4; i++)); do server_file "$dir" $(($3 + i)) "$i"; done
}

now_ms() { date +%s%3N; }
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
busy_ticks() { awk '/^cpu / {print $2 + $3 + $4 + $7 + $8 + $9}' /proc/stat; }
hz=$(getconf CLK_TCK)
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p"; }

# start VAR DIR N FIRST_PORT: launch queryd on DIR/main.toml (its pid in
# VAR at once, for cleanup) and wait for its N servers; sets ms (launch to
# all answering).
start() {
	local t0 out
	"$QUERYD" check -config "$2/main.toml" >"$2/check.log" 2>&1 || die "queryd check $2/main.toml: $(cat "$2/check.log")"
	t0=$(now_ms)
	"$QUERYD" -config "$2/main.toml" </dev/null 2>"$2/queryd.log" &
	printf -v "$1" %s "$!"
	out=$("$hc" wait -base "$4" -n "$3" -timeout 30s 2>&1) || die "not all $3 servers of $2 answer: $out $(tail -n 5 "$2/queryd.log")"
	ms=$(($(now_ms) - t0))
}

small_port=$((PORT - 100))
# Every port must be free (another program on one would answer for it).
busy=$(ss -Hlnu | awk -v lo="$small_port" -v hi=$((PORT + SERVERS)) '{n = split($4, a, ":"); p = a[n] + 0; if (p >= lo && p <= hi) print $4}' | head -n 3)
[[ -z $busy ]] || die "UDP ports in $small_port-$((PORT + SERVERS)) are in use ($busy ...): set PORT"
host "$work/small" $((PORT - 2)) "$small_port" 1
host "$work/big" $((PORT - 1)) "$PORT" "$SERVERS"
echo "bench/hosts.sh: SERVERS=$SERVERS SPREAD=$SPREAD RUNS=$RUNS DURATION=$DURATION SOURCES=$SOURCES INFLIGHT=$INFLIGHT SOCKET=${SOCKET:-default} WORKERS=$WORKERS; RLIMIT_NOFILE $(ulimit -n); $(nproc) CPUs, $(uname -r); load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2

start small "$work/small" 1 "$small_port"
small_ms=$ms
"$hc" feed -dir "$work/small/run" -n 1 >/dev/null
start big "$work/big" "$SERVERS" "$PORT"
big_ms=$ms
"$hc" feed -dir "$work/big/run" -n "$SERVERS" >/dev/null
sleep 2
rss1=$(rss_kib "$small") rssN=$(rss_kib "$big")
per=$(awk -v a="$rssN" -v b="$rss1" -v n="$SERVERS" 'BEGIN {printf "%.1f", (a - b) / (n - 1)}')
echo "RESULT start servers=$SERVERS all_answering_ms=$big_ms one_server_ms=$small_ms (target <= 5000)"
echo "RESULT rss servers=$SERVERS rss_kib=$rssN one_server_rss_kib=$rss1 per_server_kib=$per (target <= 1024)"

c0=$(cpu_ticks "$big")
sleep "$IDLE"
c1=$(cpu_ticks "$big")
echo "RESULT idle servers=$SERVERS seconds=$IDLE cpu_percent=$(awk -v t=$((c1 - c0)) -v hz="$hz" -v s="$IDLE" 'BEGIN {printf "%.2f", 100 * t / hz / s}') (target <= 2)"

# The spread load: A (SPREAD servers of the big queryd) and B (the small
# queryd's one server), alternating.
results=$work/spread.txt
: >"$results"
for run in $(seq "$RUNS"); do
	for arm in spread one single; do
		case $arm in
		spread) target=127.0.0.1:$PORT ports=$SPREAD pid=$big ;;
		one) target=127.0.0.1:$PORT ports=1 pid=$big ;;
		single) target=127.0.0.1:$small_port ports=1 pid=$small ;;
		esac
		m0=$(busy_ticks)
		out=$("$work/queryd-bench" load -target "$target" -ports "$ports" -proto a2s_info -pid "$pid" \
			-sources "$SOURCES" -inflight "$INFLIGHT" -duration "$DURATION" -warmup "$WARMUP") || die "load $arm: $out"
		m1=$(busy_ticks)
		line=$(grep '^RESULT ' <<<"$out" | cut -d' ' -f2-)
		total=$(field answered <<<" $line")
		# machine CPU over the whole load run (warmup included) per answer of
		# the measured window, scaled by the window's share of the run.
		mcpu=$(awk -v t=$((m1 - m0)) -v hz="$hz" -v a="$total" -v d="$secs" -v w="${WARMUP%s}" \
			'BEGIN {printf "%.3f", (t / hz) * (d / (d + w)) * 1e6 / a}')
		echo "run=$run arm=$arm $line machine_cpu_us_per_answer=$mcpu" | tee -a "$results" >&2
	done
done
awk '
function med(arr, n,   i, j, t) {
	for (i = 2; i <= n; i++) { t = arr[i]; for (j = i - 1; j >= 1 && arr[j] > t; j--) arr[j + 1] = arr[j]; arr[j + 1] = t }
	return n % 2 ? arr[(n + 1) / 2] : (arr[n / 2] + arr[n / 2 + 1]) / 2
}
{
	for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
	k = v["arm"]; n[k]++
	ans[k, n[k]] = v["answered_per_s"]; srv[k, n[k]] = v["cpu_us_per_reply"]; mc[k, n[k]] = v["machine_cpu_us_per_answer"]; lost[k] += v["lost"]
}
END {
	for (k in n) {
		for (i = 1; i <= n[k]; i++) { a[i] = ans[k, i]; s[i] = srv[k, i]; m[i] = mc[k, i] }
		A[k] = med(a, n[k]); S[k] = med(s, n[k]); M[k] = med(m, n[k])
		printf "RESULT spread arm=%s servers=%d/%d answered_per_s=%.0f queryd_cpu_us_per_answer=%.3f machine_cpu_us_per_answer=%.3f lost=%d\n", k, (k == "spread" ? spread : 1), (k == "single" ? 1 : servers), A[k], S[k], M[k], lost[k]
	}
	printf "RESULT spread ratio spread/one answers_per_s=%.3f queryd_cpu_per_answer=%.3f machine_cpu_per_answer=%.3f (target 0.9-1.1)\n", A["spread"] / A["one"], S["spread"] / S["one"], M["spread"] / M["one"]
	printf "RESULT spread ratio spread/single answers_per_s=%.3f queryd_cpu_per_answer=%.3f machine_cpu_per_answer=%.3f\n", A["spread"] / A["single"], S["spread"] / S["single"], M["spread"] / M["single"]
}' spread="$SPREAD" servers="$SERVERS" "$results"

# SIGHUP adding one server while every running one is asked in a loop.
"$hc" watch -base "$PORT" -n "$SERVERS" -duration 8s -interval 20ms >"$work/watch.txt" 2>&1 &
watcher=$!
sleep 2
server_file "$work/big" $((PORT + SERVERS)) "$SERVERS"
t0=$(now_ms)
kill -HUP "$big"
"$hc" wait -base "$PORT" -first "$SERVERS" -n 1 -timeout 10s >/dev/null || die "the server added by SIGHUP does not answer: $(tail -n 5 "$work/big/queryd.log")"
added_ms=$(($(now_ms) - t0))
wait "$watcher" || die "hostcheck watch failed: $(cat "$work/watch.txt")"
watcher=
w=$(grep '^RESULT ' "$work/watch.txt" | cut -d' ' -f2-)
echo "RESULT sighup running=$SERVERS added_answering_ms=$added_ms $w (target lost=0)"
kill -0 "$big" 2>/dev/null || die "queryd exited after SIGHUP: $(tail -n 5 "$work/big/queryd.log")"
