#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# deploy/ci/changelog-release.sh VERSION [DATE] — turns CHANGELOG.md's
# Unreleased section into the section of VERSION (0.1.0 or v0.1.0), dated
# DATE (default: today, UTC), in the form of Keep a Changelog 1.1.0:
#
#   ## [Unreleased]
#
#   ## [0.1.0] - 2026-12-05
#
#   ### <each capability, as it was under Unreleased>
#   ...
#   [Unreleased]: https://github.com/queryd/queryd/compare/v0.1.0...HEAD
#   [0.1.0]: https://github.com/queryd/queryd/releases/tag/v0.1.0
#
# The entries are not touched: they move as they are, under the new
# heading, and Unreleased is left empty. The link references at the end are
# added or updated (a later version links the comparison with the one
# before it); the intro's "has not tagged a version yet" sentence, if still
# there, is replaced. Then: review, commit, tag vVERSION, and
# deploy/ci/release.sh builds it (and checks that this section exists).
# CHANGELOG=FILE works on another file (the tests).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

fail() {
	printf '[%s] FAIL: %s\n' "${0##*/}" "$*" >&2
	exit 1
}

version=${1:?usage: deploy/ci/changelog-release.sh VERSION [DATE]}
version=${version#v}
date=${2:-$(date -u +%F)}
file=${CHANGELOG:-CHANGELOG.md}
repo=https://github.com/queryd/queryd
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] || fail "'$version' is not a version X.Y.Z"
[[ "$date" =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}$ ]] || fail "'$date' is not a date YYYY-MM-DD"
[ -f "$file" ] || fail "no $file"
grep -qx '## \[Unreleased\]' "$file" || fail "$file has no '## [Unreleased]' heading"
! grep -q "^## \[${version//./\\.}\]" "$file" || fail "$file already has a section for $version"
# The Unreleased section must list something.
entries=$(awk '/^## \[Unreleased\]$/ {on = 1; next} on && /^## / {exit} on && /^- /' "$file" | wc -l)
[ "$entries" -gt 0 ] || fail "the Unreleased section of $file lists no change"
# The version before this one (for the comparison link), if any.
previous=$(sed -n 's/^## \[\([0-9][^]]*\)\] - .*/\1/p' "$file" | head -n 1)

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
awk -v h="## [$version] - $date" '
	{ print }
	/^## \[Unreleased\]$/ && !done { print ""; print h; done = 1 }
' "$file" |
	# The intro written before the first release.
	perl -0pe 's/queryd\s+has\s+not\s+tagged\s+a\s+version\s+yet:\s+everything\s+so\s+far\s+is\s+under\s+Unreleased,\s+grouped\s+by\s+capability\./Each version lists\nits changes grouped by capability; the next version'"'"'s are under Unreleased./' |
	# The link references: drop the old Unreleased one, then add.
	grep -v '^\[Unreleased\]: ' >"$tmp"
# Trailing blank lines go; one blank line before the references.
sed -i -e :a -e '/^\n*$/{$d;N;ba' -e '}' "$tmp"
grep -q '^\[[0-9][^]]*\]: ' "$tmp" || echo >>"$tmp"
{
	echo "[Unreleased]: $repo/compare/v$version...HEAD"
	if [ -n "$previous" ]; then
		echo "[$version]: $repo/compare/v$previous...v$version"
	else
		echo "[$version]: $repo/releases/tag/v$version"
	fi
} >>"$tmp"
# The new references go before the older versions' ones.
awk '/^\[[0-9][^]]*\]: / && !/^\['"${version//./\\.}"'\]/ {old = old $0 "\n"; next} {print} END {printf "%s", old}' "$tmp" >"$tmp.2"
mv "$tmp.2" "$tmp"
cat "$tmp" >"$file"
tr '\n' ' ' <"$file" | grep -qE 'not +tagged +a +version' && echo "note: $file still says it has not tagged a version: edit its intro" >&2
echo "$file: '## [$version] - $date' over the $entries entries of Unreleased (now empty); links at the end."
echo "Next: review (git diff $file), commit, then: git tag -a v$version -m 'queryd $version' && deploy/ci/release.sh"
