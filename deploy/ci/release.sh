#!/usr/bin/env bash
# deploy/ci/release.sh [vX.Y.Z] — the release files, into dist/, and checks
# of each. What is built is what is committed: a clean `git worktree` of the
# tag (or of HEAD), so uncommitted files never leak in.
#
#   - From a tag: the argument, else a vX.Y.Z tag at HEAD (the highest, if
#     several). goreleaser (v2.15.1 from the Go module proxy, cached) runs
#     `release --clean --skip=publish,announce` with .goreleaser.yaml: the
#     version is the tag without its "v" (v0.1.0: 0.1.0), every platform
#     is built (linux amd64/arm64, darwin amd64/arm64, windows amd64), and
#     CHANGELOG.md must have the version's section "## [0.1.0] - DATE"
#     (deploy/ci/changelog-release.sh), copied to dist/release-notes.md.
#   - Without one: a snapshot of HEAD, `release --snapshot --clean`,
#     version <the patch after the latest tag reachable>-next+<commit>
#     (0.0.1-next+0123abc before the first tag), Linux only unless
#     QUERYD_RELEASE_PLATFORMS=all (darwin and windows: 3 more cold
#     compiles, which CI's release step has no time for on every run).
#
# dist/ then holds the archives queryd_<version>_<os>_<arch>.tar.gz (.zip
# for Windows), the packages (.deb, .rpm; amd64, arm64), the container image
# queryd_<version>_linux_amd64.image.tar (deploy/docker/Dockerfile's
# release stage: the archive's own linux/amd64 binary, built with podman
# on the stand-in base of lib.sh, saved with `podman save --format
# docker-archive` so that `docker load` and `podman load` take it and its
# HEALTHCHECK stays) and checksums.txt (sha256 of each of those files).
# Checked:
#   - checksums.txt lists exactly those files and matches them;
#   - the linux binaries are static and stripped; the darwin and windows
#     ones exist (a snapshot: cmd/queryd compiles for darwin/arm64 and
#     windows/amd64);
#   - the linux amd64 archive's binary, `queryd version`, prints the version
#     and the commit (from -ldflags): "queryd 0.1.0 (commit …)" for v0.1.0;
#   - the archives hold README.md, LICENSE and queryd.toml.example, the
#     .deb the binary, the unit and the template unit queryd@.service with
#     their drop-ins, the sysusers file, /etc/queryd/queryd.toml as a
#     conffile and the license, the .rpm the license;
#   - the image, loaded back from its archive: the archive's binary byte for
#     byte, the same `queryd version`, user 65532, HEALTHCHECK kept;
#   - `go install …/cmd/queryd@<tag>` reports the tag (v0.99.0-ci for a
#     snapshot), from a module proxy made of the tree in a temp folder (no
#     network).
# deploy/ci/systemd.sh then installs the amd64 .deb made here.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
. deploy/ci/lib.sh
ROOT=$PWD

semver='^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$'
tag=${1:-}
if [ -n "$tag" ]; then
	[[ "$tag" =~ $semver ]] || fail "'$tag' is not a release tag vX.Y.Z (or vX.Y.Z-pre)"
	git rev-parse -q --verify "refs/tags/$tag^{commit}" >/dev/null || fail "no tag $tag in this repository"
else
	tag=$(git tag --points-at HEAD --list 'v[0-9]*' --sort=-v:refname | grep -E "$semver" | head -n 1) || true
fi

need_debs file=file readelf=binutils unzip=unzip
goreleaser=$(go_tool goreleaser)
tmp=$(mktemp -d /var/tmp/queryd-release.XXXXXX)
src=$tmp/src
image=""
cleanup() {
	[ -z "$image" ] || podman rmi -f "$image" >/dev/null 2>&1 || true
	git worktree remove --force "$src" >/dev/null 2>&1 || true
	chmod -R u+w "$tmp" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

if [ -n "$tag" ]; then
	ref=$tag
	mode=release
	platforms=all
	args=(release --clean --skip=publish,announce)
	export GORELEASER_CURRENT_TAG=$tag
else
	ref=HEAD
	mode=snapshot
	platforms=${QUERYD_RELEASE_PLATFORMS:-linux}
	args=(release --snapshot --clean)
fi
commit=$(git rev-parse "$ref^{commit}")
git worktree add --detach --quiet "$src" "$commit"
if [ "$mode" = release ]; then
	say "release $tag: commit $commit, a clean worktree of the tag; every platform"
else
	latest=$(git -C "$src" describe --tags --abbrev=0 --match 'v[0-9]*' 2>/dev/null) || latest="none (0.0.0)"
	say "no vX.Y.Z tag at HEAD: a snapshot of commit $commit (latest tag reachable: $latest); platforms: $platforms (QUERYD_RELEASE_PLATFORMS)"
fi

# A tag needs its CHANGELOG.md section, "## [0.1.0] - 2026-12-05" for
# v0.1.0, listing at least one change: checked before the build, and its
# text (up to the next "## " heading) is the release's notes.
if [ "$mode" = release ]; then
	tagver=${tag#v}
	heading=$(grep -m 1 -E "^## \[${tagver//./\\.}\] - [0-9]{4}-[0-9]{2}-[0-9]{2}\$" "$src/CHANGELOG.md") ||
		fail "$tag: CHANGELOG.md has no section '## [$tagver] - YYYY-MM-DD' (deploy/ci/changelog-release.sh $tagver makes it from Unreleased; commit, then tag)"
	awk -v h="$heading" '$0 == h {on = 1; next} on && /^## / {exit} on' "$src/CHANGELOG.md" >"$tmp/release-notes.md"
	grep -q '^- ' "$tmp/release-notes.md" || fail "$tag: CHANGELOG.md's section '$heading' lists no change"
	pass "CHANGELOG.md: '$heading', $(grep -c '^- ' "$tmp/release-notes.md") entries (dist/release-notes.md)"
fi

# goreleaser reads the URL of the remote; a clone without one (a worktree
# made from a bundle, say) gets this clone's own path, through git's
# environment only (no config is written).
if ! git ls-remote --get-url >/dev/null 2>&1 || [ "$(git ls-remote --get-url)" = origin ]; then
	export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=remote.origin.url GIT_CONFIG_VALUE_0="$ROOT"
fi
say "goreleaser ${args[*]}"
start=$SECONDS
if ! (cd "$src" && GOFLAGS='' NO_COLOR=1 QUERYD_RELEASE_PLATFORMS=$platforms "$goreleaser" "${args[@]}") >"$tmp/goreleaser.log" 2>&1; then
	tail -n 40 "$tmp/goreleaser.log"
	fail "goreleaser ${args[*]}"
fi
# (goreleaser colours its log even with NO_COLOR: strip the escapes. It
# says "took:" only of slow steps: with warm caches there may be none.)
sed 's/\x1b\[[0-9;]*m//g' "$tmp/goreleaser.log" | { grep -E 'building snapshot|took:' || true; } | sed 's/^ */  /'
say "goreleaser took $((SECONDS - start)) s"
rm -rf dist
mv "$src/dist" dist
version=$(sed -n 's/.*"version":"\([^"]*\)".*/\1/p' dist/metadata.json)
[ -n "$version" ] || fail "no version in dist/metadata.json"
if [ "$mode" = release ]; then
	[ "$version" = "${tag#v}" ] || fail "goreleaser made version '$version' of tag $tag, want ${tag#v}"
	cp "$tmp/release-notes.md" dist/release-notes.md
fi

# A snapshot builds Linux only: the other platforms are still compiled
# (cached between runs; -trimpath, as goreleaser, shares its build cache),
# so that code that does not build for them fails here, not on the tag.
if [ "$platforms" != all ]; then
	start=$SECONDS
	for p in darwin/arm64 windows/amd64; do
		(cd "$src" && GOFLAGS='' CGO_ENABLED=0 GOOS=${p%/*} GOARCH=${p#*/} go build -trimpath -o /dev/null ./cmd/queryd) ||
			fail "cmd/queryd does not build for $p: a tag's release, which builds it, would fail"
	done
	pass "cmd/queryd builds for darwin/arm64 and windows/amd64 too (a tag's release builds them), in $((SECONDS - start)) s"
fi

for target in linux_amd64_v1 linux_arm64_v8.0; do
	bin=dist/queryd_$target/queryd
	[ -f "$bin" ] || fail "no $bin"
	readelf -lW "$bin" | grep -q INTERP && fail "$bin has an ELF interpreter: not static"
	readelf -SW "$bin" | grep -qE '\.(sym|debug_)' && fail "$bin has symbols or debug info: not stripped"
	pass "$bin: static, stripped, $(stat -c %s "$bin") bytes"
done
archives=(linux_amd64.tar.gz linux_arm64.tar.gz)
if [ "$platforms" = all ]; then
	for bin in dist/queryd-other_darwin_amd64_v1/queryd dist/queryd-other_darwin_arm64_v8.0/queryd dist/queryd-other_windows_amd64_v1/queryd.exe; do
		[ -s "$bin" ] || fail "no $bin"
		pass "$bin: $(file -b "$bin" | cut -d, -f1-2), $(stat -c %s "$bin") bytes"
	done
	archives+=(darwin_amd64.tar.gz darwin_arm64.tar.gz windows_amd64.zip)
fi

# The archives' contents, and the linux amd64 archive's own binary.
for a in "${archives[@]}"; do
	archive=dist/queryd_${version}_$a
	[ -f "$archive" ] || fail "no $archive"
	case $archive in
	*.zip) list=$(unzip -Z1 "$archive") ;;
	*) list=$(tar -tzf "$archive") ;;
	esac
	for f in README.md LICENSE queryd.toml.example; do
		grep -qx "$f" <<<"$list" || fail "$archive lacks $f"
	done
	grep -qxE 'queryd(\.exe)?' <<<"$list" || fail "$archive lacks the binary"
done
pass "the ${#archives[@]} archives hold the binary, README.md, LICENSE and queryd.toml.example"
mkdir "$tmp/archive"
tar -xzf "dist/queryd_${version}_linux_amd64.tar.gz" -C "$tmp/archive" queryd
got=$("$tmp/archive/queryd" version)
want="queryd $version (commit $commit, $(go env GOVERSION), linux/amd64)"
[ "$got" = "$want" ] || fail "queryd version of queryd_${version}_linux_amd64.tar.gz's binary: '$got', want '$want'"
pass "queryd version of the linux amd64 archive's binary: $got"

deb=$(ls dist/queryd_*_amd64.deb)
dpkg-deb -c "$deb" | awk '{print $6}' >"$tmp/deb.list"
for f in ./usr/bin/queryd ./usr/lib/systemd/system/queryd.service ./usr/lib/systemd/system/queryd.service.d/package.conf \
	./usr/lib/systemd/system/queryd@.service ./usr/lib/systemd/system/queryd@.service.d/package.conf \
	./usr/lib/sysusers.d/queryd.conf ./etc/queryd/queryd.toml ./usr/share/doc/queryd/copyright; do
	grep -qx "$f" "$tmp/deb.list" || fail "$deb lacks $f"
done
dpkg-deb -f "$deb" Package Version | tr '\n' ' ' >"$tmp/deb.fields"
dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles | grep -qx /etc/queryd/queryd.toml ||
	fail "$deb does not mark /etc/queryd/queryd.toml as a conffile"
dpkg-deb -f "$deb" Depends | grep -qw procps || fail "$deb does not depend on procps (/bin/kill, for ExecReload=)"
dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/bin/queryd | cmp -s - "$tmp/archive/queryd" ||
	fail "$deb's /usr/bin/queryd is not the linux amd64 archive's binary"
ls dist/queryd-*.x86_64.rpm dist/queryd-*.aarch64.rpm >/dev/null || fail "no .rpm packages"
dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/share/doc/queryd/copyright | cmp -s - LICENSE ||
	fail "$deb's /usr/share/doc/queryd/copyright is not LICENSE"
for rpm in dist/queryd-*.rpm; do
	# An rpm's payload is a cpio archive after its headers: the license's
	# path is in the header's file list, its text in the payload.
	grep -qa /usr/share/licenses/queryd "$rpm" || fail "$rpm lacks /usr/share/licenses/queryd/LICENSE"
done
pass "$deb ($(cat "$tmp/deb.fields")): the archive's binary, unit and template unit with their drop-ins, sysusers, conffile /etc/queryd/queryd.toml, LICENSE as copyright, depends on procps; .rpm packages built, with the license"

# The container image: the Dockerfile's release stage, its runtime stage
# around the archive's binary, from a build context of just what it copies.
podman_setup
dockerfile_base_images
standin_base_image
ctx=$tmp/image
mkdir -p "$ctx/prebuilt/linux_amd64" "$ctx/prebuilt/run/queryd" "$ctx/deploy/docker"
cp "$tmp/archive/queryd" "$ctx/prebuilt/linux_amd64/queryd"
cp "$src/deploy/docker/queryd.toml" "$ctx/deploy/docker/queryd.toml"
image=localhost/queryd:${version//+/-} # (no "+" in an image tag)
image_tar=queryd_${version}_linux_amd64.image.tar
start=$SECONDS
podman build --pull=never --network=none --format docker --layers=false --platform linux/amd64 \
	"${ULIMITS[@]}" --target release --build-arg TARGETARCH=amd64 \
	-f "$src/deploy/docker/Dockerfile" -t "$image" "$ctx" >"$tmp/image.log" 2>&1 ||
	{ tail -n 30 "$tmp/image.log"; fail "podman build --target release -f deploy/docker/Dockerfile"; }
podman save --quiet --format docker-archive -o "dist/$image_tar" "$image" || fail "podman save $image"
podman rmi -f "$image" >/dev/null
podman load --quiet -i "dist/$image_tar" >/dev/null || fail "podman load -i dist/$image_tar"
got=$(podman run --rm --no-healthcheck --network none "${ULIMITS[@]}" "$image" version) || fail "podman run $image version"
[ "$got" = "$want" ] || fail "queryd version in the image: '$got', want '$want'"
ctr=$(podman create --no-healthcheck "$image")
podman cp "$ctr:/usr/local/bin/queryd" "$tmp/image.queryd" && podman rm -f "$ctr" >/dev/null
cmp -s "$tmp/image.queryd" "$tmp/archive/queryd" || fail "the image's /usr/local/bin/queryd is not the archive's binary"
user=$(podman image inspect --format '{{.User}}' "$image")
health=$(podman image inspect --format '{{json .HealthCheck}}' "$image")
[ "$user" = 65532:65532 ] || fail "image user '$user', want 65532:65532"
[[ "$health" == *queryd*query* ]] || fail "the image archive lost its HEALTHCHECK: $health"
pass "dist/$image_tar ($image, built in $((SECONDS - start)) s, $(stat -c %s "dist/$image_tar") bytes): loads, holds the archive's binary byte for byte, queryd version the same, user $user, HEALTHCHECK kept"

# checksums.txt: goreleaser's lines (archives and packages) and the image's,
# one per file of the release, each matching.
cp dist/checksums.txt "$tmp/goreleaser.sums"
(cd dist && shopt -s nullglob && files=(*.tar.gz *.zip *.deb *.rpm "$image_tar") && sha256sum -- "${files[@]}" | sort -k 2 >checksums.txt)
missing=$(grep -vxFf dist/checksums.txt "$tmp/goreleaser.sums") && fail "checksums.txt: goreleaser's lines differ: $missing"
(cd dist && sha256sum --quiet --strict -c checksums.txt) || fail "dist/checksums.txt does not match"
find dist -maxdepth 1 -type f \( -name '*.tar.gz' -o -name '*.zip' -o -name '*.deb' -o -name '*.rpm' -o -name '*.image.tar' \) -printf '%f\n' | sort >"$tmp/files"
awk '{print $2}' dist/checksums.txt | diff - "$tmp/files" >/dev/null || fail "checksums.txt does not list exactly the release files: $(awk '{print $2}' dist/checksums.txt | diff - "$tmp/files")"
n=$(wc -l <dist/checksums.txt)
want_n=$((${#archives[@]} + 5)) # the archives, 2 .deb, 2 .rpm, the image
[ "$n" = "$want_n" ] || { cat dist/checksums.txt; fail "checksums.txt lists $n files, want $want_n"; }
pass "checksums.txt matches its $n files, exactly the release's"

# go install …@<tag>: the tree as that module version in a file proxy
# (interop/ is its own module, so not in the zip), its dependencies from
# this machine's module cache (already verified there: GOSUMDB=off).
modver=$tag
[ -n "$modver" ] || modver=v0.99.0-ci
mod=github.com/queryd/queryd
proxy=$tmp/proxy/$mod/@v
mkdir -p "$proxy" "$tmp/bin"
git archive --format=zip --prefix="$mod@$modver/" -o "$proxy/$modver.zip" "$commit" -- . ':(exclude)interop'
git show "$commit:go.mod" >"$proxy/$modver.mod"
printf '{"Version":"%s","Time":"%s"}\n' "$modver" "$(git log -1 --format=%cI "$commit")" >"$proxy/$modver.info"
echo "$modver" >"$proxy/list"
if ! GOFLAGS='' GOTOOLCHAIN=local GOSUMDB=off GOBIN="$tmp/bin" \
	GOPROXY="file://$tmp/proxy,file://$(go env GOMODCACHE)/cache/download" GOMODCACHE="$tmp/gomod" \
	go install "$mod/cmd/queryd@$modver" >"$tmp/install.log" 2>&1; then
	cat "$tmp/install.log"
	fail "go install $mod/cmd/queryd@$modver"
fi
got=$("$tmp/bin/queryd" version)
[[ "$got" == "queryd $modver (commit unknown, "* ]] || fail "after go install …@$modver, queryd version: '$got'"
pass "go install $mod/cmd/queryd@$modver: $got"

say "$mode $version in dist/:"
(cd dist && for f in $(awk '{print $2}' checksums.txt) checksums.txt; do printf '  %-48s %9d bytes\n' "$f" "$(stat -c %s "$f")"; done)
