#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# deploy/ci/tools.sh — builds the Go tools of deploy/ci (lib.sh's go_tools)
# into the cache, so that the steps' budgets time their own work, not a
# first run's builds. Cached tools cost nothing.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
. deploy/ci/lib.sh

for name in $(printf '%s\n' "${!go_tools[@]}" | sort); do
	path=$(go_tool "$name")
	pass "$name ${go_tools[$name]##*@}: $path"
done
