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

# podman_setup installs podman and writes its containers.conf (exported as
# CONTAINERS_CONF), and sets ULIMITS (podman build takes no default ulimits
# from containers.conf): podman runs with runc, as crun fails on this VM's
# hybrid cgroups, and runc cannot raise RLIMIT_NOFILE past the hard limit
# without CAP_SYS_RESOURCE, so the default ulimits are this machine's hard
# limits (nofile at most this shell's hard limit; nproc a modest 4096: runc
# was refused anything from 65536 up here, below this shell's hard limit).
podman_setup() {
	need_debs podman=podman runc=runc slirp4netns=slirp4netns
	mkdir -p "$QUERYD_CI_CACHE"
	export CONTAINERS_CONF="$QUERYD_CI_CACHE/containers.conf"
	local nofile
	nofile=$(ulimit -Hn)
	[ "$nofile" = unlimited ] || [ "$nofile" -gt 65536 ] && nofile=65536
	ULIMITS=(--ulimit "nofile=$nofile:$nofile" --ulimit "nproc=4096:4096")
	cat >"$CONTAINERS_CONF" <<CONF
# Written by deploy/ci/lib.sh (podman_setup).
[containers]
default_ulimits = ["nofile=$nofile:$nofile", "nproc=4096:4096"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
CONF
}

# image_stamp IMAGE prints the image's queryd-ci.stamp label ("" if absent).
image_stamp() { podman image inspect --format '{{index .Labels "queryd-ci.stamp"}}' "$1" 2>/dev/null || true; }

# image_id IMAGE prints the image's ID ("" if absent).
image_id() { podman image inspect --format '{{.Id}}' "$1" 2>/dev/null || true; }

# image_drop_old IMAGE ID removes the image ID if IMAGE no longer names it
# (an image remade under the same name leaves the old one untagged).
image_drop_old() {
	if [ -n "$2" ] && [ "$2" != "$(image_id "$1")" ]; then
		podman rmi "$2" >/dev/null 2>&1 || true
	fi
}

# Stand-ins: our machines cannot reach the base images' registries, so the
# scripts make local images under the names deploy/docker/Dockerfile uses,
# and podman builds with --pull=never --network=none. Each carries a label
# naming what it was made from, and is remade when that changes.

# dockerfile_base_images sets GO_IMAGE and BASE_IMAGE to the names of
# deploy/docker/Dockerfile's build and runtime base images.
dockerfile_base_images() {
	local go_version
	go_version=$(sed -n 's/^ARG GO_VERSION=//p' deploy/docker/Dockerfile)
	GO_IMAGE=docker.io/library/golang:${go_version}-bookworm
	BASE_IMAGE=$(sed -n 's/^FROM \([^ ]*distroless[^ ]*\).*/\1/p' deploy/docker/Dockerfile)
	[ -n "$go_version" ] && [ -n "$BASE_IMAGE" ] || fail "cannot read the base images from deploy/docker/Dockerfile"
}

# standin_go_image makes GO_IMAGE's stand-in (golang:<GO_VERSION>-bookworm):
# the cached debootstrap tree plus this machine's Go and, with GOPROXY=off,
# this module's dependencies (from the machine's module cache) so that `go
# mod download` works offline.
standin_go_image() {
	go mod download
	local tree want old tmp hostcache goroot
	tree=$(debian_tree)
	want="$(go env GOVERSION) $(sha256sum go.sum | cut -c1-16) $(basename "$tree")"
	[ "$(image_stamp "$GO_IMAGE")" != "$want" ] || return 0
	say "making the stand-in $GO_IMAGE ($want)"
	old=$(image_id "$GO_IMAGE")
	tmp=$(mktemp -d)
	hostcache=$(go env GOMODCACHE)
	GOFLAGS=-modcacherw GOMODCACHE="$tmp/gomod" GOSUMDB=off \
		GOPROXY="file://$hostcache/cache/download" go mod download
	goroot=$(go env GOROOT)
	tar -c -C "$tree" . -C "$(dirname "$goroot")" "$(basename "$goroot")" -C "$tmp" gomod \
		--transform="s,^$(basename "$goroot")\(/\|$\),usr/local/go\1," --transform='s,^gomod\(/\|$\),go/pkg/mod\1,' |
		podman import --quiet \
			--change 'ENV PATH=/go/bin:/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
			--change 'ENV GOPATH=/go' --change 'ENV GOTOOLCHAIN=local' --change 'ENV GOPROXY=off' \
			--change 'WORKDIR /go' --change "LABEL queryd-ci.stamp=\"$want\"" - "$GO_IMAGE" >/dev/null
	chmod -R u+w "$tmp" && rm -rf "$tmp"
	image_drop_old "$GO_IMAGE" "$old"
}

# standin_base_image makes BASE_IMAGE's stand-in
# (gcr.io/distroless/static-debian12:nonroot): a static tree with passwd and
# group (nonroot = 65532), /tmp, /home/nonroot and CA certificates.
standin_base_image() {
	local want="static nonroot 1" old base
	[ "$(image_stamp "$BASE_IMAGE")" != "$want" ] || return 0
	say "making the stand-in $BASE_IMAGE"
	old=$(image_id "$BASE_IMAGE")
	base=$(mktemp -d)
	mkdir -p "$base/etc/ssl/certs" "$base/tmp" "$base/home/nonroot"
	printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$base/etc/passwd"
	printf 'root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n' >"$base/etc/group"
	printf 'hosts: files dns\n' >"$base/etc/nsswitch.conf"
	printf 'PRETTY_NAME="queryd CI stand-in for distroless static (Debian 12)"\n' >"$base/etc/os-release"
	[ -f /etc/ssl/certs/ca-certificates.crt ] && cp /etc/ssl/certs/ca-certificates.crt "$base/etc/ssl/certs/"
	chmod 1777 "$base/tmp"
	chmod 700 "$base/home/nonroot"
	chown 65532:65532 "$base/home/nonroot"
	tar -c -C "$base" . | podman import --quiet \
		--change 'USER 65532' --change 'WORKDIR /home/nonroot' \
		--change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
		--change 'ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt' \
		--change "LABEL queryd-ci.stamp=\"$want\"" - "$BASE_IMAGE" >/dev/null
	rm -rf "$base"
	image_drop_old "$BASE_IMAGE" "$old"
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
