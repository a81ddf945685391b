#!/usr/bin/env bash
# deploy/ci/kubernetes.sh — renders deploy/kubernetes with `kustomize build`
# and validates it with `kubeconform -strict` against Agones' GameServer and
# Fleet schemas (../shared/schemas/agones/ beside the clone; the check is
# skipped, saying so, when that folder is absent). Then it proves that the
# check can fail: a typo (runAsUser → runAsUsr) planted in a copy of
# gameserver.yaml, and again in fleet.yaml, must be refused. It also checks
# that every pod mounts the ConfigMap under the name kustomize generated.
#
# Tools from the Go module proxy, cached: kustomize v5.7.1, kubeconform
# v0.7.0. No cluster, no network: schemas are local files.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
. deploy/ci/lib.sh

SCHEMAS=${QUERYD_AGONES_SCHEMAS:-../shared/schemas/agones}

kustomize=$(go_tool kustomize sigs.k8s.io/kustomize/kustomize/v5@v5.7.1)
kubeconform=$(go_tool kubeconform github.com/yannh/kubeconform/cmd/kubeconform@v0.7.0)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$kustomize" build deploy/kubernetes >"$tmp/all.yaml" || fail "kustomize build deploy/kubernetes"
pass "kustomize build deploy/kubernetes: $(grep -c '^kind:' "$tmp/all.yaml") objects ($(sed -n 's/^kind: //p' "$tmp/all.yaml" | sort | tr '\n' ' '))"

# The ConfigMap's generated name, and the name every pod mounts.
cm=$(awk '/^kind: ConfigMap/{c=1} c && /^  name:/{print $2; exit}' "$tmp/all.yaml")
[[ "$cm" == queryd-config-* ]] || fail "no generated ConfigMap queryd-config-<hash> in the build: '$cm'"
mounted=$(grep -A1 -- '- configMap:' "$tmp/all.yaml" | sed -n 's/^ *name: //p' | sort -u)
mounts=$(grep -c -- '- configMap:' "$tmp/all.yaml" || true)
[ "$mounts" = 2 ] && [ "$mounted" = "$cm" ] ||
	fail "the GameServer and the Fleet must both mount the generated ConfigMap $cm; $mounts mount(s) name: $mounted"
pass "the GameServer and the Fleet mount the generated ConfigMap $cm"
fleet=$(awk '/^kind: Fleet$/{c=1} c && /^  name:/{print $2; exit}' "$tmp/all.yaml")
grep -q "^  fleetName: $fleet\$" "$tmp/all.yaml" || fail "the FleetAutoscaler does not scale the Fleet $fleet"
pass "the FleetAutoscaler scales the Fleet $fleet"

if [ ! -d "$SCHEMAS" ]; then
	say "SKIP kubeconform: $SCHEMAS is absent (the Agones schemas live in the shared folder beside the clone); only kustomize build was checked"
	exit 0
fi
SCHEMAS=$(cd "$SCHEMAS" && pwd)

# validate FILE: kubeconform -strict with the Agones schemas; built-in kinds
# and kinds without a schema there are skipped (and listed), but the
# GameServer and the Fleet must be validated.
validate() {
	"$kubeconform" -strict -summary -verbose -ignore-missing-schemas \
		-schema-location "$SCHEMAS/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json" "$1"
}
validate "$tmp/all.yaml" >"$tmp/result" 2>&1 || { cat "$tmp/result"; fail "kubeconform -strict refused deploy/kubernetes"; }
cat "$tmp/result"
for kind in GameServer Fleet; do
	grep -q "$kind .* is valid" "$tmp/result" || fail "kubeconform did not validate the $kind (schema missing from $SCHEMAS?)"
done
skipped=$(sed -n 's/^.* - [^ ]* \([A-Za-z]*\) skipped$/\1/p; s/^.* - [^ ]* [^ ]* \([A-Za-z]*\) skipped$/\1/p' "$tmp/result" | sort -u | tr '\n' ' ')
pass "kubeconform -strict: the GameServer and the Fleet are valid (no schema in $SCHEMAS, so not validated: ${skipped:-none})"

# The check must fail on a typo: plant one in a copy of each manifest.
for file in gameserver.yaml fleet.yaml; do
	rm -rf "$tmp/planted" && cp -r deploy/kubernetes "$tmp/planted"
	grep -q 'runAsUser:' "$tmp/planted/$file" || fail "$file has no runAsUser to misspell"
	sed -i '0,/runAsUser:/s//runAsUsr:/' "$tmp/planted/$file"
	"$kustomize" build "$tmp/planted" >"$tmp/planted.yaml" || fail "kustomize build with a typo in $file"
	if validate "$tmp/planted.yaml" >"$tmp/planted.result" 2>&1; then
		cat "$tmp/planted.result"
		fail "kubeconform -strict accepted runAsUsr (a typo planted in $file)"
	fi
	grep -q "runAsUsr" "$tmp/planted.result" || { cat "$tmp/planted.result"; fail "kubeconform failed on the planted typo in $file, but not naming it"; }
	pass "a typo planted in $file is refused: $(grep -o "additional properties 'runAsUsr' not allowed" "$tmp/planted.result" | head -n 1)"
done
