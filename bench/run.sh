#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/run.sh — queryd against the fixed-reply server on the same socket
# layer (and the naive net.UDPConn baseline), A B C A B C ..., on loopback.
# See bench/README.md. Settings (environment):
#   RUNS=5            runs per server and protocol
#   DURATION=10s      measured time per run
#   WARMUP=1s         load before each measurement (not counted)
#   PROTOS="a2s_info a2s_player gs4_full q3_status sagl_info"
#   NAIVE=1           also run the naive baseline (0: skip it)
#   SHAPE=match       fixed and naive servers answer like queryd does for the
#                     protocol: as many datagrams, of the same mean size
#                     (measured by a short probe); SHAPE=size: one SIZE-byte datagram
#   SIZE=120          fixed-reply size in bytes with SHAPE=size
#   SOURCES=16 INFLIGHT=32 IO=poll   load generator settings
#   PORT=39015        queryd's UDP port; fixed = PORT+1, naive = PORT+2, admin = PORT+3
#   SERVER_CPUS= LOAD_CPUS=   taskset CPU lists (e.g. 0 and 1); empty: no pinning
#   KEEP=0            1 keeps the work directory (configs, logs, raw results)
set -euo pipefail

RUNS=${RUNS:-5}
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-1s}
PROTOS=${PROTOS:-"a2s_info a2s_player gs4_full q3_status sagl_info"}
NAIVE=${NAIVE:-1}
SHAPE=${SHAPE:-match}
SIZE=${SIZE:-120}
SOURCES=${SOURCES:-16}
INFLIGHT=${INFLIGHT:-32}
IO=${IO:-poll}
PORT=${PORT:-39015}
SERVER_CPUS=${SERVER_CPUS:-}
LOAD_CPUS=${LOAD_CPUS:-}
KEEP=${KEEP:-0}

[[ $RUNS =~ ^[0-9]+$ && $RUNS -ge 1 && $RUNS -le 50 ]] || { echo "bench/run.sh: RUNS=$RUNS: want 1 to 50" >&2; exit 2; }
[[ $NAIVE == 0 || $NAIVE == 1 ]] || { echo "bench/run.sh: NAIVE=$NAIVE: want 0 or 1" >&2; exit 2; }
[[ $SHAPE == match || $SHAPE == size ]] || { echo "bench/run.sh: SHAPE=$SHAPE: want match or size" >&2; exit 2; }

root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/queryd-bench.XXXXXX")
qpid= fpid= npid=

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
	stop "$qpid" "$fpid" "$npid"
	if [[ $KEEP == 1 ]]; then
		echo "work directory kept: $work" >&2
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

die() { echo "bench/run.sh: $*" >&2; exit 1; }

pin() { # pin CPUS CMD...: run CMD (in place of the shell) under taskset when CPUS is set
	local cpus=$1
	shift
	if [[ -n $cpus ]]; then
		exec taskset -c "$cpus" "$@"
	fi
	exec "$@"
}

echo "building queryd and queryd-bench ..." >&2
(cd "$root" && go build -o "$work/queryd" ./cmd/queryd && go build -o "$work/queryd-bench" ./cmd/queryd-bench)

qaddr=127.0.0.1:$PORT
faddr=127.0.0.1:$((PORT + 1))
naddr=127.0.0.1:$((PORT + 2))
sock=$work/feed.sock

# queryd with every protocol on, challenges on, the per-IP and unproven
# budgets on but high enough not to drop the load (16 sources answered at
# tens of MB/s each; the unproven budget is split among the receive loops
# and the SO_REUSEPORT hash may give one loop most sources, so it is 4 GiB/s:
# at 1 GiB/s Quake 3 at 340 k/s × 1.6 KB saw ~100 refusals per 10 s), metrics
# on (admin listener on loopback).
cat >"$work/queryd.toml" <<EOF
[listen]
udp = ["$qaddr"]
recv_buffer = "4MiB"

[feed]
socket = "$sock"
stale_after = "10m"

[limits]
per_ip_rate = "1GiB"
per_ip_burst = "1MiB"
unproven_rate = "4GiB"
unproven_burst = "1MiB"

[server]
name = "queryd benchmark"
map = "bench_map"
max_players = 64

[a2s]
enabled = true
[gamespy4]
enabled = true
[sagl]
enabled = true
[quake3]
enabled = true
packet_rate = 1000000.0
packet_burst = 1000000

[admin]
listen = "127.0.0.1:$((PORT + 3))"

[log]
level = "warn"
EOF

# The state: 64 players with names of 9 to 16 characters.
{
	printf '{"op":"replace","state":{"name":"queryd benchmark server","map":"de_bench","game":"Benchmark","folder":"bench","version":"1.0.0","max_players":64,'
	printf '"rules":{"mp_timelimit":"30","sv_gravity":"800"},"tags":["bench"],"players":{'
	for i in $(seq 0 63); do
		[[ $i -gt 0 ]] && printf ','
		printf '"%d":{"name":"Player_%03d%s","score":%d,"ping":%d}' "$i" "$i" "$(s=abcdefg; printf '%s' "${s:0:i%8}")" $((i * 7 % 50)) $((20 + i % 80))
	done
	printf '}}}\n'
} >"$work/state.ndjson"

"$work/queryd" check -config "$work/queryd.toml" >/dev/null || die "queryd check failed"

(pin "$SERVER_CPUS" "$work/queryd" -config "$work/queryd.toml" 2>"$work/queryd.log") &
qpid=$!
for _ in $(seq 50); do
	[[ -S $sock ]] && break
	sleep 0.1
done
[[ -S $sock ]] || die "queryd did not start: $(cat "$work/queryd.log")"
"$work/queryd" push -socket "$sock" "$work/state.ndjson" >/dev/null || die "queryd push failed"

sleep 0.3
"$work/queryd" query -proto a2s -timeout 2s "$qaddr" >/dev/null || die "queryd does not answer A2S"

# field NAME: the value of NAME=... in each line of stdin.
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p"; }

# shape PROTO: "SIZE PARTS" of queryd's answer to PROTO (SHAPE=match, from a
# short probe: mean datagram size, datagrams per answer), else "$SIZE 1".
shape() {
	local out
	if [[ $SHAPE != match ]]; then
		echo "$SIZE 1"
		return
	fi
	out=$("$work/queryd-bench" load -target "$qaddr" -proto "$1" -sources 2 -inflight 2 -duration 300ms) ||
		die "probe of queryd with $1 failed: $out"
	awk -v b="$(field bytes_in <<<"$out")" -v d="$(field dgrams_in <<<"$out")" -v a="$(field answered <<<"$out")" \
		'BEGIN {s = int(b / d + 0.5); printf "%d %d\n", s, int(d / a + 0.5)}'
}

# servers_for PROTO: (re)start the fixed and naive servers answering like queryd.
servers_for() {
	local size parts sp
	stop "$fpid" "$npid"
	fpid= npid=
	sp=$(shape "$1") || exit 1
	read -r size parts <<<"$sp"
	echo "== $1: fixed replies of $parts x $size bytes" >&2
	(pin "$SERVER_CPUS" "$work/queryd-bench" fixed -listen "$faddr" -size "$size" -parts "$parts" >/dev/null 2>>"$work/fixed.log") &
	fpid=$!
	if [[ $NAIVE == 1 ]]; then
		(pin "$SERVER_CPUS" "$work/queryd-bench" naive -listen "$naddr" -size "$size" -parts "$parts" >/dev/null 2>>"$work/naive.log") &
		npid=$!
	fi
	sleep 0.3
	echo "$size $parts" >"$work/shape.$1"
}

servers="queryd fixed"
[[ $NAIVE == 1 ]] && servers="queryd fixed naive"
results=$work/results.txt
: >"$results"

# load SERVER PROTO: one measured run; appends "server RESULT-fields" to $results.
load() {
	local server=$1 proto=$2 addr pid out
	case $server in
	queryd) addr=$qaddr pid=$qpid ;;
	fixed) addr=$faddr pid=$fpid ;;
	naive) addr=$naddr pid=$npid ;;
	esac
	if [[ $server == queryd ]]; then # keep the feed fresh (stale_after)
		"$work/queryd" push -socket "$sock" - <<<'{"op":"ping"}' >/dev/null
	fi
	out=$(pin "$LOAD_CPUS" "$work/queryd-bench" load -target "$addr" -proto "$proto" -pid "$pid" \
		-sources "$SOURCES" -inflight "$INFLIGHT" -io "$IO" -duration "$DURATION" -warmup "$WARMUP") ||
		die "load $server $proto failed: $out"
	echo "server=$server $(grep '^RESULT ' <<<"$out" | cut -d' ' -f2-)" >>"$results"
	grep '^RESULT ' <<<"$out" | sed "s/^RESULT/  $server/" >&2
}

median() { sort -g | awk '{a[NR]=$1} END {if (NR == 0) print "na"; else if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
spread() { sort -g | awk 'NR == 1 {lo=$1} {hi=$1} END {printf "%s-%s", lo, hi}'; }
pick() { grep "^server=$1 proto=$2 " "$results" || true; }
# paired A B PROTO: the median over rounds of A's answered/s over B's in the same round.
paired() { paste <(pick "$1" "$3" | field answered_per_s) <(pick "$2" "$3" | field answered_per_s) | awk '$2 > 0 {print $1 / $2}' | median; }

start=$(date +%s)
for proto in $PROTOS; do
	servers_for "$proto"
	for run in $(seq "$RUNS"); do
		for server in $servers; do
			load "$server" "$proto"
		done
	done
done

echo
echo "queryd-bench A/B: RUNS=$RUNS DURATION=$DURATION WARMUP=$WARMUP SOURCES=$SOURCES INFLIGHT=$INFLIGHT IO=$IO SHAPE=$SHAPE; $(nproc) CPUs; $(($(date +%s) - start)) s"
printf '%-11s %-7s %11s %17s %9s %9s %11s %9s\n' proto server "answered/s" "min-max" "p50 us" "p99 us" "CPU us/rep" "B/answer"
for proto in $PROTOS; do
	read -r size parts <"$work/shape.$proto"
	echo "$proto: the fixed-reply servers answer $parts datagram(s) of $size bytes"
	for server in $servers; do
		rows=$(pick "$server" "$proto")
		ans=$(field answered <<<"$rows" | median)
		bin=$(field bytes_in <<<"$rows" | median)
		printf '%-11s %-7s %11.0f %17s %9.1f %9.1f %11.3f %9.0f\n' "$proto" "$server" \
			"$(field answered_per_s <<<"$rows" | median)" "$(field answered_per_s <<<"$rows" | spread)" \
			"$(field p50_us <<<"$rows" | median)" "$(field p99_us <<<"$rows" | median)" \
			"$(field cpu_us_per_reply <<<"$rows" | median)" "$(awk -v b="$bin" -v a="$ans" 'BEGIN {print (a > 0 ? b / a : 0)}')"
	done
done
echo
for proto in $PROTOS; do
	q=$(pick queryd "$proto" | field answered_per_s | median)
	f=$(pick fixed "$proto" | field answered_per_s | median)
	qc=$(pick queryd "$proto" | field cpu_us_per_reply | median)
	fc=$(pick fixed "$proto" | field cpu_us_per_reply | median)
	line="RATIO proto=$proto $(awk -v q="$q" -v f="$f" -v qc="$qc" -v fc="$fc" -v p="$(paired queryd fixed "$proto")" \
		'BEGIN {printf "queryd_fixed=%.3f paired=%.3f cpu_fixed_queryd=%.3f", q / f, p, fc / qc}')"
	if [[ $NAIVE == 1 ]]; then
		n=$(pick naive "$proto" | field answered_per_s | median)
		line="$line $(awk -v q="$q" -v n="$n" 'BEGIN {printf "queryd_naive=%.3f", q / n}')"
	fi
	echo "$line"
done
echo "(queryd_fixed, queryd_naive: ratios of the median answered/s; paired: median of the per-round ratios queryd/fixed;"
echo " cpu_fixed_queryd: fixed's CPU per reply over queryd's, 1 = as cheap)"
