#!/usr/bin/env bash
# deploy/ci/run.sh [STEP...] — the deploy files, run for real (called by
# .ci/run; STEP is any of tools kubernetes release systemd container, all by
# default, in that order):
#   tools       builds the Go tools the steps use into the cache (a first
#               run on a machine: goreleaser alone took 5 min 45 s)
#   kubernetes  kustomize build + kubeconform -strict (Agones schemas)
#   release     deploy/ci/release.sh: the release of the vX.Y.Z tag at HEAD
#               (every platform), or else a snapshot of HEAD (Linux only);
#               archives, packages, the image, checksums.txt, go install
#   systemd     the .deb from release (the tag's, when HEAD has one), under
#               systemd in systemd-nspawn
#   container   deploy/docker/Dockerfile built and run with podman
# Each step has a time budget (timeout) and prints what it checked; the
# first failure stops the run, non-zero. Tools and trees are cached in
# $QUERYD_CI_CACHE (default /var/cache/queryd-ci) for the next run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
. deploy/ci/lib.sh

# Budgets in seconds (37 min in all): a fresh machine's first run took
# 35, 242, 44 and 71 s for the last four on a loaded 2-core VM; on
# 2026-12-02 the tools took 6 min and the release step's first build past 3.
declare -A budget=([tools]=900 [kubernetes]=180 [release]=900 [systemd]=240 [container]=360)
steps=("$@")
[ "${#steps[@]}" -gt 0 ] || steps=(tools kubernetes release systemd container)
mkdir -p "$QUERYD_CI_CACHE"
times=()
for step in "${steps[@]}"; do
	[ -n "${budget[$step]:-}" ] || fail "unknown step '$step' (tools, kubernetes, release, systemd, container)"
	args=()
	if [ "$step" = systemd ]; then
		deb=$(ls dist/queryd_*_amd64.deb 2>/dev/null) || true
		[ -n "$deb" ] && [ "$(wc -l <<<"$deb")" = 1 ] ||
			fail "the systemd step installs the one .deb of the release step: run that first (dist/queryd_*_amd64.deb: ${deb:-none})"
		say "systemd installs $deb (version $(sed -n 's/.*"version":"\([^"]*\)".*/\1/p' dist/metadata.json) of dist/metadata.json)"
		args=("$deb")
	fi
	printf -- '--- deploy/ci/%s.sh (budget %d s)\n' "$step" "${budget[$step]}"
	start=$SECONDS
	status=0
	timeout --kill-after=10 "${budget[$step]}" "deploy/ci/$step.sh" "${args[@]}" </dev/null || status=$?
	took=$((SECONDS - start))
	if [ "$status" = 124 ] || [ "$status" = 137 ]; then
		fail "deploy/ci/$step.sh ran out of its ${budget[$step]} s budget (before it: ${times[*]:-nothing})"
	fi
	[ "$status" = 0 ] || fail "deploy/ci/$step.sh failed (exit $status) after $took s (before it: ${times[*]:-nothing})"
	times+=("$step ${took}s")
done
say "all passed: ${times[*]} (cache: $QUERYD_CI_CACHE)"
