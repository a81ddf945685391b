#!/usr/bin/env bash
# deploy/ci/container.sh — builds deploy/docker/Dockerfile with podman and
# runs the image, checking:
#   - the image: HEALTHCHECK kept (--format docker), user 65532, its size;
#   - the container runs as uid 65532 with no capabilities;
#   - `queryd query` from the host answers through the published UDP port;
#   - a feed through the named volume (a second container, another user in
#     group 65532, `queryd push` on /run/queryd/feed.sock) is served;
#   - /healthz and the HEALTHCHECK turn unhealthy when the feed goes stale;
#   - a host folder bind-mounted on /run/queryd fails unless owned by 65532;
#   - `podman stop` ends it with exit code 0 within 2 s.
#
# Stand-ins (lib.sh): our machines cannot reach the base images'
# registries, so this script builds local images under the same names the
# Dockerfile uses (golang:<GO_VERSION>-bookworm, distroless static nonroot),
# and podman builds with --pull=never --network=none. The Dockerfile itself
# is the one users build.
#
# podman runs with runc and a containers.conf of its own (lib.sh's
# podman_setup). Ports are published on 127.0.0.1 only, through
# slirp4netns's port forwarder (loopback on both sides).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
. deploy/ci/lib.sh

podman_setup
need_debs curl=curl
dockerfile_base_images
IMAGE=localhost/queryd-ci:latest
tmp=$(mktemp -d)
name=queryd-ci-$$
cleanup() {
	podman rm -f -t 0 "$name" "$name-bind" >/dev/null 2>&1 || true
	podman volume rm -f "$name-feed" >/dev/null 2>&1 || true
	chmod -R u+w "$tmp" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

standin_go_image
standin_base_image

# --layers=false: no intermediate images pile up from run to run; the Go
# build cache (a cache mount in the Dockerfile) keeps a rebuild to seconds.
old_image=$(image_id "$IMAGE")
start=$SECONDS
# podman build does not take the default ulimits from containers.conf.
podman build --pull=never --network=none --format docker --layers=false \
	"${ULIMITS[@]}" \
	--build-arg VERSION=ci --build-arg COMMIT="$(git rev-parse HEAD)" \
	-f deploy/docker/Dockerfile -t "$IMAGE" . >"$tmp/build.log" 2>&1 ||
	{ tail -n 40 "$tmp/build.log"; fail "podman build -f deploy/docker/Dockerfile"; }
image_drop_old "$IMAGE" "$old_image"
health=$(podman image inspect --format '{{json .HealthCheck}}' "$IMAGE")
[[ "$health" == *queryd*query* ]] || fail "the image has no HEALTHCHECK (built without --format docker?): $health"
user=$(podman image inspect --format '{{.User}}' "$IMAGE")
[ "$user" = 65532:65532 ] || fail "image user '$user', want 65532:65532"
size=$(podman image inspect --format '{{.Size}}' "$IMAGE")
pass "podman build --format docker in $((SECONDS - start)) s: $IMAGE, $((size / 1000000)) MB, user $user, HEALTHCHECK kept"

# Run it as the Dockerfile's header says, with a short stale_after so that
# the stale feed shows within seconds, on free loopback ports.
free_port() { # PROTO FIRST: the first port from FIRST with no listener
	local p=$2
	while [ -n "$(ss -Hln "--$1" "sport = :$p")" ]; do p=$((p + 1)); done
	echo "$p"
}
udp=$(free_port udp 37015)
tcp=$(free_port tcp 39273)
sed 's/^stale_after = .*/stale_after = "3s"/' deploy/docker/queryd.toml >"$tmp/queryd.toml"
grep -q '^stale_after = "3s"' "$tmp/queryd.toml" || fail "deploy/docker/queryd.toml has no stale_after to shorten"
CGO_ENABLED=0 go build -o "$tmp/queryd" ./cmd/queryd
# podman logs an error for each health-check timer it cannot make without
# systemd; the checks run here by `podman healthcheck run` instead.
RUN=(podman run "${ULIMITS[@]}" --health-interval=disable)
"${RUN[@]}" -d --name "$name" --network slirp4netns:port_handler=rootlesskit \
	-p "127.0.0.1:$udp:27015/udp" -p "127.0.0.1:$tcp:9273/tcp" \
	-v "$name-feed:/run/queryd" -v "$tmp/queryd.toml:/etc/queryd/queryd.toml:ro" \
	"$IMAGE" >"$tmp/run.log" 2>&1 || { cat "$tmp/run.log"; fail "podman run $IMAGE"; }
answer() { "$tmp/queryd" query -proto a2s -timeout 1s "127.0.0.1:$udp" 2>/dev/null; }
name_is() { answer | grep -qF "\"name\": \"$1\""; }
logs() { podman logs "$name" 2>&1 | grep -v 'level=error msg=".*healthcheck' | tail -n 20; }
wait_for 10 name_is "queryd in a container" || { logs; fail "queryd query 127.0.0.1:$udp (published 27015/udp) got no answer naming the image's [server]"; }
pass "queryd query -proto a2s 127.0.0.1:$udp from the host: answered by the container"

pid=$(podman inspect --format '{{.State.Pid}}' "$name")
ids=$(awk '/^Uid:/{print $2, $3, $4, $5}' "/proc/$pid/status")
caps=$(awk '/^Cap(Prm|Eff|Amb):/{printf "%s%s ", $1, $2}' "/proc/$pid/status")
[ "$ids" = "65532 65532 65532 65532" ] || fail "the container's process runs as uid $ids, want 65532"
[ "$caps" = "CapPrm:0000000000000000 CapEff:0000000000000000 CapAmb:0000000000000000 " ] || fail "the container's process has capabilities: $caps"
pass "the container's process: uid 65532 (real, effective, saved, fs), no capabilities ($caps)"

# The game server: another container on the same named volume, as another
# user in group 65532, feeding through the socket.
feed='{"op":"replace","state":{"name":"Fed through the volume","map":"ci_map","max_players":8}}'
reply=$(echo "$feed" | "${RUN[@]}" --rm -i --no-healthcheck --network none --user 1000:1000 --group-add 65532 \
	-v "$name-feed:/run/queryd" --entrypoint /usr/local/bin/queryd "$IMAGE" push -socket /run/queryd/feed.sock 2>"$tmp/push.err") ||
	{ cat "$tmp/push.err"; fail "queryd push from a second container (uid 1000, group 65532) on the named volume"; }
wait_for 5 name_is "Fed through the volume" || fail "the fed state is not served (push replied: $reply)"
pass "fed from another container (uid 1000, group 65532) through the named volume: $reply; served"

healthz() { curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$tcp/healthz"; }
[ "$(healthz)" = 200 ] || fail "/healthz is $(healthz) while the feed is fresh"
podman healthcheck run "$name" >"$tmp/health" 2>&1 || { cat "$tmp/health"; fail "HEALTHCHECK failed while the feed is fresh"; }
pass "feed fresh: /healthz 200, HEALTHCHECK healthy"
wait_for 10 eval '[ "$(healthz)" = 503 ]' || fail "/healthz is still $(healthz) 10 s after the feed went quiet (stale_after 3s)"
if podman healthcheck run "$name" >"$tmp/health" 2>&1; then
	fail "HEALTHCHECK passes while the feed is stale"
fi
pass "feed stale: /healthz 503, HEALTHCHECK unhealthy ($(grep -v 'level=error' "$tmp/health" | head -n 1))"

t0=$(now_ms)
podman stop -t 10 "$name" >/dev/null 2>&1 || fail "podman stop exited non-zero"
ms=$(($(now_ms) - t0))
code=$(podman inspect --format '{{.State.ExitCode}}' "$name")
[ "$code" = 0 ] || { logs; fail "queryd exited with code $code on podman stop"; }
[ "$ms" -lt 2000 ] || fail "podman stop took $ms ms, want < 2 s"
pass "podman stop: exit code 0 in $ms ms"

# A host folder instead of the named volume: refused unless owned by 65532.
bind=$tmp/feed-dir
mkdir -m 0755 "$bind"
bind_run() {
	podman rm -f -t 0 "$name-bind" >/dev/null 2>&1 || true
	"${RUN[@]}" -d --name "$name-bind" --network none -v "$bind:/run/queryd" "$IMAGE" >"$tmp/run.log" 2>&1 ||
		{ cat "$tmp/run.log"; fail "podman run with a bind mount"; }
}
bind_run
wait_for 10 eval '[ "$(podman inspect --format "{{.State.Status}}" "$name-bind")" = exited ]' ||
	fail "queryd runs with a root-owned bind-mounted /run/queryd: the docs say it cannot"
podman logs "$name-bind" 2>&1 | grep -q 'permission denied' || { podman logs "$name-bind"; fail "no 'permission denied' from the root-owned bind mount"; }
chown 65532:65532 "$bind"
bind_run
wait_for 10 test -S "$bind/feed.sock" || { podman logs "$name-bind"; fail "no feed socket in a bind-mounted folder owned by 65532"; }
pass "bind-mounted host folder: 'bind: permission denied' when root's; the socket is made once it is chown 65532:65532"
