#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# interop/clientmatrix.sh — docs/clients.md's table from the interop suite's
# own results: runs the suite with every client check recording its cell
# (QUERYD_CLIENT_MATRIX), then writes the table into docs/clients.md, or
# with -check (what .ci/run does) fails when the table disagrees.
# Write it as root, with every client installed (interop/README.md):
# without root the XDP and divert cells read "skipped", and the next run
# where they pass disagrees. The check takes a cell skipped here (a tool
# missing, no root) for not verified, not for a disagreement; -strict
# makes it one.
#
#   interop/clientmatrix.sh            # run the suite, write the table
#   interop/clientmatrix.sh -check     # run the suite, check the table
#   interop/clientmatrix.sh -strict    # check, and every cell must have run
#   RESULTS=FILE interop/clientmatrix.sh -check   # check FILE, already recorded
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
mode=-write
case "${1:-}" in
-check) mode= ;;
-strict) mode=-strict ;;
'') ;;
*) echo "usage: interop/clientmatrix.sh [-check|-strict]" >&2; exit 2 ;;
esac
if [ -z "${RESULTS:-}" ]; then
	RESULTS=$(mktemp)
	trap 'rm -f "$RESULTS"' EXIT
	# The suite's own verdict comes first: a failing check fails this too.
	QUERYD_CLIENT_MATRIX=$RESULTS go test -race -count=1 -timeout 15m ./...
fi
go run ./cmd/clientmatrix ${mode:+"$mode"} "$RESULTS" ../docs/clients.md
