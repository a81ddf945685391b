#!/usr/bin/env bash
# deploy/ci/release.sh — releases, the Go way: `goreleaser release --snapshot
# --clean` with .goreleaser.yaml (goreleaser v2.15.1 from the Go module
# proxy, cached), then checks what it made in dist/:
#   - SHA256SUMS matches every archive and package;
#   - the linux amd64/arm64 binaries are static and stripped; the darwin
#     arm64 and windows amd64 ones exist;
#   - `queryd version` of the linux amd64 binary prints the snapshot version
#     and the commit (from -ldflags);
#   - the archives hold README.md, LICENSE and queryd.toml.example, the
#     .deb the binary, the unit and the template unit queryd@.service with
#     their drop-ins, the sysusers file,
#     /etc/queryd/queryd.toml as a conffile and the license, the .rpm the
#     license;
# and that `go install …/cmd/queryd@vX.Y.Z` reports vX.Y.Z (from a module
# proxy made of this tree in a temp folder: no network).
# deploy/ci/systemd.sh installs the amd64 .deb made here.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
. deploy/ci/lib.sh
ROOT=$PWD

need_debs file=file readelf=binutils unzip=unzip
goreleaser=$(go_tool goreleaser)
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT

# goreleaser reads the URL of the remote; a clone without one (a worktree
# made from a bundle, say) gets this clone's own path, through git's
# environment only (no config is written).
if ! git ls-remote --get-url >/dev/null 2>&1 || [ "$(git ls-remote --get-url)" = origin ]; then
	export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=remote.origin.url GIT_CONFIG_VALUE_0="$ROOT"
fi
say "goreleaser release --snapshot --clean"
if ! GOFLAGS='' NO_COLOR=1 "$goreleaser" release --snapshot --clean >"$tmp/goreleaser.log" 2>&1; then
	tail -n 40 "$tmp/goreleaser.log"
	fail "goreleaser release --snapshot --clean"
fi
# (goreleaser colours its log even with NO_COLOR: strip the escapes.)
sed 's/\x1b\[[0-9;]*m//g' "$tmp/goreleaser.log" | grep -E 'building snapshot|took:' | sed 's/^ */  /'
version=$(sed -n 's/.*"version":"\([^"]*\)".*/\1/p' dist/metadata.json)
commit=$(git rev-parse HEAD)
[ -n "$version" ] || fail "no version in dist/metadata.json"

(cd dist && sha256sum --quiet -c SHA256SUMS) || fail "dist/SHA256SUMS does not match"
n=$(wc -l <dist/SHA256SUMS)
[ "$n" = 8 ] || { cat dist/SHA256SUMS; fail "SHA256SUMS lists $n files, want 8 (4 archives, 2 .deb, 2 .rpm)"; }
pass "SHA256SUMS matches its 8 files: $(sed 's/^[0-9a-f]*  //' dist/SHA256SUMS | tr '\n' ' ')"

for target in linux_amd64_v1 linux_arm64_v8.0; do
	bin=dist/queryd_$target/queryd
	[ -f "$bin" ] || fail "no $bin"
	readelf -lW "$bin" | grep -q INTERP && fail "$bin has an ELF interpreter: not static"
	readelf -SW "$bin" | grep -qE '\.(sym|debug_)' && fail "$bin has symbols or debug info: not stripped"
	pass "$bin: static, stripped, $(stat -c %s "$bin") bytes"
done
for bin in dist/queryd_darwin_arm64_v8.0/queryd dist/queryd_windows_amd64_v1/queryd.exe; do
	[ -s "$bin" ] || fail "no $bin"
	pass "$bin: $(file -b "$bin" | cut -d, -f1), $(stat -c %s "$bin") bytes"
done

got=$(dist/queryd_linux_amd64_v1/queryd version)
want="queryd $version (commit $commit, $(go env GOVERSION), linux/amd64)"
[ "$got" = "$want" ] || fail "queryd version: '$got', want '$want'"
pass "queryd version: $got"

for archive in dist/queryd_*_linux_amd64.tar.gz dist/queryd_*_windows_amd64.zip; do
	case $archive in
	*.zip) list=$(unzip -Z1 "$archive") ;;
	*) list=$(tar -tzf "$archive") ;;
	esac
	for f in README.md LICENSE queryd.toml.example; do
		grep -qx "$f" <<<"$list" || fail "$archive lacks $f"
	done
	grep -qxE 'queryd(\.exe)?' <<<"$list" || fail "$archive lacks the binary"
done
pass "the archives hold the binary, README.md, LICENSE and queryd.toml.example"

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
ls dist/queryd-*.x86_64.rpm dist/queryd-*.aarch64.rpm >/dev/null || fail "no .rpm packages"
dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/share/doc/queryd/copyright | cmp -s - LICENSE ||
	fail "$deb's /usr/share/doc/queryd/copyright is not LICENSE"
for rpm in dist/queryd-*.rpm; do
	# An rpm's payload is a cpio archive after its headers: the license's
	# path is in the header's file list, its text in the payload.
	grep -qa /usr/share/licenses/queryd "$rpm" || fail "$rpm lacks /usr/share/licenses/queryd/LICENSE"
done
pass "$deb ($(cat "$tmp/deb.fields")): binary, unit and template unit with their drop-ins, sysusers, conffile /etc/queryd/queryd.toml, LICENSE as copyright, depends on procps; .rpm packages built, with the license"

# go install …@vX.Y.Z: this tree as module version v0.99.0-ci in a file
# proxy (interop/ is its own module, so not in the zip), its dependencies
# from this machine's module cache (already verified there: GOSUMDB=off).
tag=v0.99.0-ci
mod=github.com/queryd/queryd
proxy=$tmp/proxy/$mod/@v
mkdir -p "$proxy" "$tmp/bin"
git archive --format=zip --prefix="$mod@$tag/" -o "$proxy/$tag.zip" HEAD -- . ':(exclude)interop'
cp go.mod "$proxy/$tag.mod"
printf '{"Version":"%s","Time":"%s"}\n' "$tag" "$(git log -1 --format=%cI)" >"$proxy/$tag.info"
echo "$tag" >"$proxy/list"
if ! GOFLAGS='' GOTOOLCHAIN=local GOSUMDB=off GOBIN="$tmp/bin" \
	GOPROXY="file://$tmp/proxy,file://$(go env GOMODCACHE)/cache/download" GOMODCACHE="$tmp/gomod" \
	go install "$mod/cmd/queryd@$tag" >"$tmp/install.log" 2>&1; then
	cat "$tmp/install.log"
	fail "go install $mod/cmd/queryd@$tag"
fi
got=$("$tmp/bin/queryd" version)
[[ "$got" == "queryd $tag (commit unknown, "* ]] || fail "after go install …@$tag, queryd version: '$got'"
pass "go install $mod/cmd/queryd@$tag: $got"
