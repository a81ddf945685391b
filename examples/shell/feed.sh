#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A queryd feeder in shell: `queryd push` sends NDJSON lines from a
# here-document and prints queryd's reply to each.
#
#   ./feed.sh [SOCKET]        (or QUERYD_FEED_SOCKET=... ./feed.sh)
#   (without either, `queryd push` finds the socket of [feed] socket = "")
#   QUERYD=/path/to/queryd ./feed.sh    (default: queryd on PATH)
#
# Handy for tests, cron jobs and game servers that can run a command. Each
# `queryd push` is one connection; it stops at the first rejected line and
# exits 1. Send {"op":"ping"} every few seconds (or any change) so that
# queryd does not go silent ([feed] stale_after).
set -euo pipefail

socket=${1:-${QUERYD_FEED_SOCKET:-}}
queryd=${QUERYD:-queryd}
push=("$queryd" push)
if [ -n "$socket" ]; then
	push+=(-socket "$socket")
fi

# The whole state, a player joining (Bob, Carol), scoring (Bob) and leaving
# (Carol), and a ping. Players are keyed by id; null removes one.
"${push[@]}" <<'EOF_FEED'
{"op":"replace","state":{"name":"Shell feeder example","map":"example_map","game":"Example Game","max_players":16,"players":{"1":{"name":"Alice","score":3,"ping":20}},"rules":{"mp_timelimit":"30"}}}
{"op":"patch","state":{"players":{"2":{"name":"Bob","ping":35}}}}
{"op":"patch","state":{"players":{"3":{"name":"Carol","ping":50}}}}
{"op":"patch","state":{"players":{"2":{"score":10}}}}
{"op":"patch","state":{"players":{"3":null}}}
{"op":"ping"}
EOF_FEED

# A message queryd rejects: push prints the reply on stdout, names the line
# on stderr and exits 1; nothing changed.
if reply=$("${push[@]}" <<'EOF_FEED'
{"op":"patch","state":{"max_players":-1}}
EOF_FEED
); then
	echo "feed.sh: queryd accepted max_players -1" >&2
	exit 1
fi
case $reply in
*'"ok":false'*) echo "rejected as expected: $reply" ;;
*)
	echo "feed.sh: queryd push failed before any reply" >&2
	exit 1
	;;
esac
