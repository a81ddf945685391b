#!/usr/bin/env bash
# deploy/ci/kubernetes.sh — renders deploy/kubernetes (the Agones sidecar:
# a GameServer and a Fleet whose queryd reads the GameServer from the SDK
# server, [agones]) and deploy/kubernetes/host (host mode: a DaemonSet, game
# server pods as a StatefulSet and as an Agones Fleet) with `kustomize build`
# and validates both with `kubeconform -strict` against Agones' GameServer
# and Fleet schemas (deploy/ci/schemas/agones/, copied from Agones: see its
# README; $QUERYD_AGONES_SCHEMAS overrides the folder) and Kubernetes' own,
# made by deploy/ci/k8sschema from the OpenAPI documents in
# k8s.io/kube-openapi's test data. Then it proves that the check can fail: a
# typo (runAsUser → runAsUsr) planted in a copy of each manifest must be
# refused. It also checks that every pod mounts the ConfigMap under the name
# kustomize generated, that the sidecar's queryd reads Agones and the game
# mounts nothing of queryd's (no feeder), and that the host-mode Fleet's
# server file names the SDK server's port the Fleet gives it.
#
# Tools from the Go module proxy, cached: kustomize v5.7.1, kubeconform
# v0.7.0. No cluster, no network: schemas are local files.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
. deploy/ci/lib.sh

SCHEMAS=${QUERYD_AGONES_SCHEMAS:-deploy/ci/schemas/agones}
for f in gameserver_v1.json fleet_v1.json; do
	[ -f "$SCHEMAS/$f" ] || fail "no Agones schema $SCHEMAS/$f (deploy/ci/schemas/agones/README.md)"
done
SCHEMAS=$(cd "$SCHEMAS" && pwd)
# The Kubernetes OpenAPI documents' module: the version kustomize v5.7.1
# builds with (so it is in the module cache once kustomize is).
KUBE_OPENAPI=v0.0.0-20241212222426-2c72e554b1e7

kustomize=$(go_tool kustomize)
kubeconform=$(go_tool kubeconform)
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
# The sidecar reads Agones: [agones] in the generated config, and the game
# containers mount nothing of queryd's and feed nothing.
grep -q '^    \[agones\]' "$tmp/all.yaml" || fail "the generated queryd config has no [agones]: the sidecar does not read Agones"
# (kustomize sorts keys: a container's name is not its first line, so count:
# one volumeMounts, queryd's, in each of the two pods.)
mount_lists=$(grep -c '^ *volumeMounts:$' "$tmp/all.yaml" || true)
[ "$mount_lists" = 2 ] && ! grep -q QUERYD_FEED_SOCKET "$tmp/all.yaml" ||
	fail "$mount_lists containers mount volumes, or a game names the feed socket: want only queryd's mounts (the sidecar example has no feeder)"
pass "the sidecar's queryd reads Agones ([agones]); the game containers mount nothing of queryd's"

# Host mode (deploy/kubernetes/host): the DaemonSet and the game server
# pods, validated against Kubernetes' own schemas (apps/v1 and v1 of
# Kubernetes 1.24, from the OpenAPI documents k8s.io/kube-openapi ships as
# test data, made strict by deploy/ci/k8sschema; kustomize's own dependency,
# so the module is in the cache already).
kube_openapi=$(GOFLAGS='' go mod download -json "k8s.io/kube-openapi@$KUBE_OPENAPI" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
openapi=$kube_openapi/pkg/util/proto/testdata/openapi_v3_0_0
[ -f "$openapi/apps/v1.json" ] && [ -f "$openapi/v1.json" ] || fail "no Kubernetes OpenAPI documents in k8s.io/kube-openapi@$KUBE_OPENAPI ($openapi)"
mkdir -p "$tmp/k8s"
go run ./deploy/ci/k8sschema "$tmp/k8s" "$openapi/apps/v1.json" DaemonSet apps/v1 StatefulSet apps/v1 Deployment apps/v1 ||
	fail "deploy/ci/k8sschema (apps/v1)"
go run ./deploy/ci/k8sschema "$tmp/k8s" "$openapi/v1.json" ConfigMap v1 Service v1 || fail "deploy/ci/k8sschema (v1)"
K8S_SCHEMAS="$tmp/k8s/{{.ResourceKind}}{{.KindSuffix}}.json"

# validate FILE: kubeconform -strict with the Agones schemas and the
# Kubernetes ones; kinds without a schema in either (the FleetAutoscaler)
# are skipped and listed.
validate() {
	"$kubeconform" -strict -summary -verbose -ignore-missing-schemas \
		-schema-location "$SCHEMAS/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json" -schema-location "$K8S_SCHEMAS" "$1"
}

"$kustomize" build deploy/kubernetes/host >"$tmp/host.yaml" || fail "kustomize build deploy/kubernetes/host"
pass "kustomize build deploy/kubernetes/host: $(grep -c '^kind:' "$tmp/host.yaml") objects ($(sed -n 's/^kind: //p' "$tmp/host.yaml" | sort | tr '\n' ' '))"
validate "$tmp/host.yaml" >"$tmp/host.result" 2>&1 || { cat "$tmp/host.result"; fail "kubeconform -strict refused deploy/kubernetes/host"; }
cat "$tmp/host.result"
for kind in DaemonSet StatefulSet Fleet ConfigMap Service; do
	grep -q " $kind .* is valid" "$tmp/host.result" || fail "kubeconform did not validate the $kind of deploy/kubernetes/host"
done
grep -q 'skipped' "$tmp/host.result" && fail "kubeconform skipped objects of deploy/kubernetes/host"
pass "kubeconform -strict: deploy/kubernetes/host's DaemonSet, StatefulSet, Fleet, Service and ConfigMaps are valid (Kubernetes 1.24 and Agones schemas)"
# What the DaemonSet is for: the node's network, the capabilities of the XDP
# fast path, the hostPath folders the game pods share with it, the generated
# ConfigMaps.
ds=$(awk '/^kind: DaemonSet$/{c=1} /^---$/{c=0} c' "$tmp/host.yaml")
sts=$(awk '/^kind: StatefulSet$/{c=1} /^---$/{c=0} c' "$tmp/host.yaml")
hfleet=$(awk '/^kind: Fleet$/{c=1} /^---$/{c=0} c' "$tmp/host.yaml")
grep -q '^      hostNetwork: true$' <<<"$ds" || fail "the DaemonSet does not run on the host's network"
[ "$(grep -A2 '^            add:$' <<<"$ds" | tr -d ' \n')" = "add:-BPF-NET_ADMIN" ] || fail "the DaemonSet's queryd does not add CAP_BPF and CAP_NET_ADMIN (and only those)"
for folder in /run/queryd /var/lib/queryd/servers.d; do
	grep -q "path: $folder\$" <<<"$ds" && grep -q "path: $folder\$" <<<"$sts" ||
		fail "the DaemonSet and the game server pods do not both mount the hostPath $folder"
done
grep -q "path: /var/lib/queryd/servers.d\$" <<<"$hfleet" || fail "the host-mode Fleet's pods do not mount the hostPath /var/lib/queryd/servers.d"
for cm in queryd-host-config queryd-host-servers; do
	gen=$(sed -n "s/^  name: \($cm-[a-z0-9]*\)$/\1/p" "$tmp/host.yaml")
	[ -n "$gen" ] && grep -q "name: $gen\$" <<<"$ds" || fail "the DaemonSet does not mount the generated ConfigMap $cm-<hash> ('$gen')"
done
pass "the DaemonSet: host network, CAP_BPF and CAP_NET_ADMIN, the hostPath folders /run/queryd and /var/lib/queryd/servers.d shared with the game server pods, the generated ConfigMaps"
# The host-mode Fleet: its pods on the node's network, and the server file
# they write reads the SDK server at the port the Fleet gives it.
grep -q '^          hostNetwork: true$' <<<"$hfleet" || fail "the host-mode Fleet's pods are not on the host's network: the node's queryd cannot reach their SDK servers"
http_port=$(awk '/sdkServer:/{s=1; next} s && /httpPort:/{print $2; exit}' <<<"$hfleet")
[ -n "$http_port" ] && grep -q "sdk = \"localhost:$http_port\"" <<<"$hfleet" ||
	fail "the host-mode Fleet's server file does not read its SDK server (sdkServer httpPort '$http_port')"
pass "the host-mode Fleet: host network, its server file's [agones] sdk is localhost:$http_port (its sdkServer httpPort)"
for file in daemonset.yaml mygame.yaml mygame-agones.yaml; do
	rm -rf "$tmp/planted" && cp -r deploy/kubernetes/host "$tmp/planted"
	grep -q 'runAsUser:' "$tmp/planted/$file" || fail "host/$file has no runAsUser to misspell"
	sed -i '0,/runAsUser:/s//runAsUsr:/' "$tmp/planted/$file"
	"$kustomize" build "$tmp/planted" >"$tmp/planted.yaml" || fail "kustomize build with a typo in host/$file"
	if validate "$tmp/planted.yaml" >"$tmp/planted.result" 2>&1; then
		cat "$tmp/planted.result"
		fail "kubeconform -strict accepted runAsUsr (a typo planted in host/$file)"
	fi
	grep -q "additional properties 'runAsUsr' not allowed" "$tmp/planted.result" || { cat "$tmp/planted.result"; fail "kubeconform failed on the typo in host/$file, but not naming it"; }
	pass "a typo planted in host/$file is refused: additional properties 'runAsUsr' not allowed"
done

validate "$tmp/all.yaml" >"$tmp/result" 2>&1 || { cat "$tmp/result"; fail "kubeconform -strict refused deploy/kubernetes"; }
cat "$tmp/result"
for kind in GameServer Fleet; do
	grep -q "$kind .* is valid" "$tmp/result" || fail "kubeconform did not validate the $kind (schema missing from $SCHEMAS?)"
done
skipped=$(sed -n 's/^.* - [^ ]* \([A-Za-z]*\) skipped$/\1/p; s/^.* - [^ ]* [^ ]* \([A-Za-z]*\) skipped$/\1/p' "$tmp/result" | sort -u | tr '\n' ' ')
pass "kubeconform -strict: the GameServer, the Fleet and the ConfigMap are valid (kinds without a schema, not validated: ${skipped:-none})"

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
