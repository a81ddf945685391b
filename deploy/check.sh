#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# deploy/check.sh — the integration kit's checks, run by .ci/run after its
# smoke test (UDP port 27015 must be free), from the repository root:
#   - builds queryd as deploy/docker/Dockerfile does (CGO_ENABLED=0, static);
#   - runs it on the embedded demo config and requires a row for every
#     protocol in `queryd query -table 127.0.0.1:27015`;
#   - checks deploy/systemd/queryd.service and queryd@.service (as
#     queryd@check.service) with `systemd-analyze verify` (no
#     warnings allowed) and `systemd-analyze security --offline` (exposure
#     at most 2.0) when the machine has systemd-analyze.
# The feed examples run in the unit tests (TestFeedExamples in cmd/queryd).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

smoke=$(mktemp -d)
pid=""
cleanup() {
	if [ -n "$pid" ]; then kill -TERM "$pid" 2>/dev/null || true; fi
	rm -rf "$smoke"
}
trap cleanup EXIT
# The demo server's name, from the embedded config's [server] table.
demo_name=$(sed -n 's/^name = "\(.*\)"$/\1/p' config/default.toml | head -n 1)

# The binary deploy/docker/Dockerfile builds: static, no cgo.
CGO_ENABLED=0 go build -o "$smoke/queryd-static" ./cmd/queryd
"$smoke/queryd-static" </dev/null 2>"$smoke/static.log" &
pid=$!
# Every protocol the demo config enables (as the daemon logs them at start:
# protocols="[a2s gamespy4 ...]") must answer (a row naming the demo server).
all_rows() {
	local proto protos
	protos=$(sed -n 's/.*protocols="\[\([^]]*\)\]".*/\1/p' "$smoke/static.log" | head -n 1)
	[ -n "$protos" ] || return 1
	for proto in $protos; do
		grep -qE "^$proto +$demo_name " <<<"$1" || return 1
	done
}
table=""
for _ in $(seq 1 20); do
	table=$("$smoke/queryd-static" query -table -timeout 2s 127.0.0.1:27015 2>"$smoke/table.err") || true
	all_rows "$table" && break
	sleep 0.2
done
kill -TERM "$pid"
wait "$pid" || true
pid=""
echo "$table"
if ! all_rows "$table"; then
	echo "queryd query -table 127.0.0.1:27015: not every protocol of the demo config answered"
	cat "$smoke/table.err" "$smoke/static.log"
	exit 1
fi
if command -v systemd-analyze >/dev/null 2>&1; then
	# verify needs ExecStart's binary to exist: check copies that point at the
	# build (the template as one instance of it, queryd@check.service).
	for unit in queryd.service queryd@.service; do
		copy=${unit/@/@check}
		sed "s#/usr/local/bin/queryd#$smoke/queryd-static#g" "deploy/systemd/$unit" >"$smoke/$copy"
		if ! verify=$(systemd-analyze verify "$smoke/$copy" 2>&1) || [ -n "$verify" ]; then
			echo "systemd-analyze verify deploy/systemd/$unit:"
			echo "$verify"
			exit 1
		fi
		echo "systemd-analyze verify $unit: no warnings"
		if systemd-analyze security --help 2>/dev/null | grep -q -- --offline; then
			systemd-analyze security --offline=yes --threshold=20 "$smoke/$copy" >"$smoke/security" 2>&1 ||
				{ cat "$smoke/security"; echo "the exposure of $unit is above 2.0"; exit 1; }
			tail -n 1 "$smoke/security"
		fi
	done
else
	echo "systemd-analyze not available: units not verified"
fi
