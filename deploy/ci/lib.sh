# shellcheck shell=bash
# deploy/ci/lib.sh — helpers for the deploy/ci/ scripts (sourced, not run).
#
# Downloads and builds are kept between runs on the same machine under
# $QUERYD_CI_CACHE (default /var/cache/queryd-ci): Go tools in bin/, the
# Debian tree in rootfs/, the container stand-ins in podman's own storage.
# Nothing here talks to anything but the package registries (Debian, the Go
# module proxy) and loopback.

QUERYD_CI_CACHE=${QUERYD_CI_CACHE:-/var/cache/queryd-ci}
export DEBIAN_FRONTEND=noninteractive

# say prints one line prefixed with the script's name.
say() { printf '[%s] %s\n' "${0##*/}" "$*"; }

# fail prints why and exits non-zero.
fail() {
	printf '[%s] FAIL: %s\n' "${0##*/}" "$*" >&2
	exit 1
}

# pass prints one checked fact.
pass() { printf '[%s] ok: %s\n' "${0##*/}" "$*"; }

# as_root runs a command as root (CI already is; a developer may use sudo).
as_root() {
	if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

# need_debs installs the Debian packages whose command is missing, given as
# command=package pairs.
need_debs() {
	local pair missing=()
	for pair in "$@"; do
		command -v "${pair%%=*}" >/dev/null 2>&1 || missing+=("${pair#*=}")
	done
	if [ "${#missing[@]}" -gt 0 ]; then
		say "apt-get install ${missing[*]}" >&2
		mkdir -p "$QUERYD_CI_CACHE"
		if ! { as_root apt-get update -qq && as_root apt-get install -y -qq --no-install-recommends "${missing[@]}"; } \
			>"$QUERYD_CI_CACHE/apt.log" 2>&1; then
			tail -n 20 "$QUERYD_CI_CACHE/apt.log" >&2
			fail "apt-get install ${missing[*]} (log: $QUERYD_CI_CACHE/apt.log)"
		fi
	fi
}

# go_tools are the Go tools the steps use, each MODULE@VERSION (built by
# the tools step, deploy/ci/tools.sh, before the steps that use them).
declare -A go_tools=(
	[kustomize]=sigs.k8s.io/kustomize/kustomize/v5@v5.7.1
	[kubeconform]=github.com/yannh/kubeconform/cmd/kubeconform@v0.7.0
	[goreleaser]=github.com/goreleaser/goreleaser/v2@v2.15.1
)

# go_tool NAME prints the path of Go tool NAME (go_tools) built from the
# Go module proxy, building it into the cache on first use (one binary per
# version, so a version change rebuilds it).
go_tool() {
	local name=$1 pkg=${go_tools[$1]:-}
	[ -n "$pkg" ] || fail "go_tool: no tool '$name' in go_tools"
	local dir="$QUERYD_CI_CACHE/bin/${name}-${pkg##*@}"
	if [ ! -x "$dir/$name" ]; then
		say "go install $pkg (first run on this machine; cached in $dir)" >&2
		mkdir -p "$dir"
		if ! GOBIN="$dir" GOFLAGS='' go install "$pkg" >"$dir.log" 2>&1; then
			tail -n 30 "$dir.log" >&2
			fail "go install $pkg (log: $dir.log)"
		fi
	fi
	echo "$dir/$name"
}

# debian_mirror prints the Debian mirror this machine's apt uses.
debian_mirror() {
	local url
	url=$(sed -n 's/^URIs: *\([^ ]*\).*/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | grep -v security | head -n 1)
	[ -n "$url" ] || url=$(sed -n 's/^deb \(\[[^]]*\] \)\{0,1\}\([^ ]*\) bookworm .*/\2/p' /etc/apt/sources.list 2>/dev/null | head -n 1)
	[ -n "$url" ] || fail "no Debian mirror in /etc/apt/sources.list.d/debian.sources or /etc/apt/sources.list"
	echo "$url"
}

# DEBIAN_TREE_PACKAGES are added to debootstrap's minbase: systemd to boot,
# procps for /bin/kill (the .deb depends on it).
DEBIAN_TREE_PACKAGES=systemd,systemd-sysv,dbus,procps

# debian_tree prints the path of a minimal Debian bookworm tree with
# DEBIAN_TREE_PACKAGES (booted by systemd-nspawn, and the base of the Go
# build stand-in), made with debootstrap on first use and kept in the cache
# under a name that changes with the package list.
debian_tree() {
	local tree
	tree="$QUERYD_CI_CACHE/rootfs/bookworm-$(echo "$DEBIAN_TREE_PACKAGES" | sha256sum | cut -c1-12)"
	if [ ! -e "$tree.done" ]; then
		need_debs debootstrap=debootstrap
		say "debootstrap bookworm into $tree (first run on this machine)" >&2
		as_root rm -rf "$tree"
		as_root mkdir -p "$(dirname "$tree")"
		as_root debootstrap --variant=minbase --include="$DEBIAN_TREE_PACKAGES" \
			bookworm "$tree" "$(debian_mirror)" >"$QUERYD_CI_CACHE/debootstrap.log" 2>&1 ||
			{ tail -n 20 "$QUERYD_CI_CACHE/debootstrap.log" >&2; fail "debootstrap (log: $QUERYD_CI_CACHE/debootstrap.log)"; }
		as_root rm -rf "$tree"/var/cache/apt/archives/*.deb "$tree"/var/lib/apt/lists/*
		as_root touch "$tree.done"
	fi
	echo "$tree"
}

# now_ms prints the time in milliseconds (for durations).
now_ms() { date +%s%3N; }

# wait_for SECONDS COMMAND... retries COMMAND every 0.1 s until it succeeds
# or SECONDS pass; returns its last status.
wait_for() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.1
	done
}
