#!/usr/bin/env bash
# deploy/ci/systemd.sh DEB — the unit under a real systemd: boots a minimal
# Debian bookworm tree (debootstrap, cached) with
#   systemd-nspawn --register=no --keep-unit --private-network -b
# (its own network namespace: only its loopback), installs the .deb that
# deploy/ci/release.sh built (the binary, deploy/systemd/queryd.service, the
# packages' drop-in, the sysusers file, /etc/queryd/queryd.toml from
# queryd.toml.example; its postinst runs systemd-sysusers; the tag's own
# .deb when HEAD carries a vX.Y.Z tag), then checks:
#   - the installed `queryd version` is the package's version;
#   - `systemctl enable --now queryd` returns once queryd sent READY=1: active
#     (running), with queryd's STATUS= line, answering A2S on the container's
#     loopback, the feed socket /run/queryd/feed.sock 0660 queryd:queryd;
#   - `systemctl reload` applies a changed [server] name and keeps the PID;
#   - a broken config on reload fails the reload (ExecReload's `queryd
#     check`) and the service stays up, same PID, same answers;
#   - `systemd-analyze security queryd` is at most 2.0;
#   - `systemctl stop` is clean (exit 0, Result=success) and removes
#     /run/queryd;
#   - the template unit: queryd@alpha and queryd@beta (/etc/queryd/alpha.toml
#     and beta.toml) run at once, each answering A2S and GameSpy4 with its
#     own name on its own port, with its own feed socket
#     /run/queryd-NAME/feed.sock; a feed to one and a reload of the other
#     change only that one; with [listen] socket = "uring" the unit's system
#     call filter lets io_uring run, and a drop-in refusing io_uring_setup
#     makes queryd log it and serve on the batch layer; exposure at most 2.0;
#     stopping one leaves the
#     other answering; `dpkg --purge` stops and disables the instances;
#   - `dpkg --purge` removes it, and the unit header's own install steps
#     (by hand, /usr/local/bin) give a running queryd too.
# Commands run inside the container with nsenter on its PID 1 (no machined
# registration is needed). The tree is copied afresh every run; the cached
# one is never booted.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
. deploy/ci/lib.sh

deb=${1:?usage: deploy/ci/systemd.sh QUERYD_AMD64_DEB}
[ -f "$deb" ] || fail "no package $deb"
need_debs systemd-nspawn=systemd-container nsenter=util-linux

# Namespaces are what nspawn needs from the sandbox: a machine that refuses
# them cannot run this part at all.
if ! why=$(unshare --mount --pid --uts --ipc --net --fork true 2>&1); then
	say "SKIP: this machine refuses new namespaces (unshare: $why), so systemd-nspawn cannot boot the unit's test tree"
	exit 0
fi

tree=$(debian_tree)
work=$(mktemp -d /var/tmp/queryd-nspawn.XXXXXX)
nspawn=""
cleanup() {
	if [ -n "$nspawn" ] && kill -0 "$nspawn" 2>/dev/null; then
		kill -TERM "$nspawn" 2>/dev/null || true
		wait_for 20 eval '! kill -0 "$nspawn" 2>/dev/null' || kill -KILL "$nspawn" 2>/dev/null || true
		wait "$nspawn" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT
cp -a "$tree" "$work/root"
cp "$deb" "$work/root/root/queryd.deb"

systemd-nspawn --register=no --keep-unit --private-network --console=read-only \
	-M queryd-ci -D "$work/root" -b </dev/null >"$work/boot.log" 2>&1 &
nspawn=$!
# The container's PID 1: systemd, a child of systemd-nspawn (or of its
# child, when it keeps one in between).
leader() {
	local p
	for p in "$nspawn" $(pgrep -P "$nspawn"); do
		pgrep -P "$p" -x systemd && return 0
	done
	return 1
}
pid1=""
wait_for 30 eval 'pid1=$(leader)' || { cat "$work/boot.log"; fail "systemd did not start in the container within 30 s"; }
ct() { nsenter -t "$pid1" -a -- "$@"; }
state=""
booted() {
	state=$(ct systemctl is-system-running 2>/dev/null) || true
	[ "$state" = running ] || [ "$state" = degraded ]
}
wait_for 60 booted || { tail -n 30 "$work/boot.log"; fail "the container did not finish booting within 60 s (state: $state)"; }
pass "booted $(ct systemctl --version | head -n 1) in systemd-nspawn (state: $state; interfaces: $(ct ls /sys/class/net | tr '\n' ' '))"

ct dpkg -i /root/queryd.deb >"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log"; fail "dpkg -i $(basename "$deb")"; }
ct getent passwd queryd >/dev/null || fail "the package's postinst did not create the queryd user (systemd-sysusers)"
# The package's version is the binary's (Debian writes a pre-release's
# "-" as "~": 0.1.0~rc1 is 0.1.0-rc1).
debver=$(dpkg-deb -f "$deb" Version)
qversion=$(ct /usr/bin/queryd version)
[[ "$qversion" == "queryd ${debver//\~/-} (commit "* ]] || fail "queryd version of the installed package $debver: '$qversion'"
pass "dpkg -i $(basename "$deb"): queryd user $(ct id queryd); $qversion"

# journal prints queryd's last log lines (for a failure's message).
journal() { ct journalctl -u queryd.service --no-pager -n 30 -o short-monotonic >&2 || true; }
show() { ct systemctl show -p "$1" --value queryd.service; }
qbin=/usr/bin/queryd # the package's; /usr/local/bin/queryd after the manual install
answer() { ct "$qbin" query -proto a2s -timeout 2s 127.0.0.1:27015 2>/dev/null; }
name_is() { answer | grep -qF "\"name\": \"$1\""; }

t0=$(now_ms)
ct systemctl enable --now queryd.service >"$work/start.log" 2>&1 ||
	{ cat "$work/start.log"; journal; fail "systemctl enable --now queryd"; }
took=$(($(now_ms) - t0))
[ "$(show ActiveState)/$(show SubState)" = active/running ] || fail "after start: $(show ActiveState)/$(show SubState)"
status=$(show StatusText)
[[ "$status" == answering* ]] || fail "no STATUS= line from queryd (StatusText: '$status')"
pid=$(show MainPID)
name_is "My Server" || fail "queryd does not answer A2S with the config's [server] name on 127.0.0.1:27015"
sock=$(ct stat -c '%A %U:%G' /run/queryd/feed.sock) || fail "no feed socket /run/queryd/feed.sock"
[ "$sock" = "srw-rw---- queryd:queryd" ] || fail "feed socket: $sock, want srw-rw---- queryd:queryd"
pass "active (running) after READY=1 (systemctl enable --now returned in $took ms), PID $pid, STATUS=\"$status\", answers A2S, feed socket $sock"

ct sed -i 's/^name = "My Server"$/name = "Reloaded by CI"/' /etc/queryd/queryd.toml
ct systemctl reload queryd.service || { journal; fail "systemctl reload with a changed [server] name"; }
wait_for 5 name_is "Reloaded by CI" || fail "the reloaded [server] name is not served"
[ "$(show MainPID)" = "$pid" ] || fail "reload changed the main PID: $pid → $(show MainPID)"
pass "systemctl reload: the new name is served, main PID still $pid"

ct cp /etc/queryd/queryd.toml /root/good.toml
ct sh -c 'echo "[bogus" >>/etc/queryd/queryd.toml'
if ct systemctl reload queryd.service 2>"$work/reload.err"; then
	fail "systemctl reload succeeded with a broken config"
fi
[ "$(show ActiveState)/$(show SubState)" = active/running ] || fail "a failed reload stopped the service: $(show ActiveState)/$(show SubState)"
[ "$(show MainPID)" = "$pid" ] || fail "a failed reload changed the main PID"
name_is "Reloaded by CI" || fail "after a failed reload, queryd no longer serves the running config"
pass "a broken config fails the reload ($(head -n 1 "$work/reload.err")); still active (running), PID $pid, same answers"
ct cp /root/good.toml /etc/queryd/queryd.toml

ct systemd-analyze security --no-pager queryd.service >"$work/security" 2>&1 || true
exposure=$(sed -n 's/.*Overall exposure level for queryd.service: \([0-9.]*\).*/\1/p' "$work/security")
[ -n "$exposure" ] || { cat "$work/security"; fail "systemd-analyze security printed no exposure"; }
awk -v e="$exposure" 'BEGIN { exit !(e <= 2.0) }' || { cat "$work/security"; fail "systemd-analyze security: exposure $exposure, above 2.0"; }
pass "systemd-analyze security queryd: exposure $exposure (≤ 2.0)"

t0=$(now_ms)
ct systemctl stop queryd.service || fail "systemctl stop exited non-zero"
took=$(($(now_ms) - t0))
result="$(show ActiveState) Result=$(show Result) status=$(show ExecMainStatus)"
[ "$result" = "inactive Result=success status=0" ] || fail "after stop: $result"
ct test ! -e /run/queryd || fail "/run/queryd is left after stop"
pass "systemctl stop: exit 0 in $took ms, $result, /run/queryd removed"

# The template unit: two instances at once, each with its own config,
# ports, runtime directory and feed socket.
instance_config() { # NAME UDP_PORT ADMIN_PORT
	cat <<TOML
[listen]
udp = ["127.0.0.1:$2"]
[feed]
socket = "/run/queryd-$1/feed.sock"
mode = "0660"
[server]
name = "Instance $1"
map = "ci_$1"
max_players = 8
[admin]
listen = "127.0.0.1:$3"
TOML
}
instance_config alpha 27101 9301 | ct tee /etc/queryd/alpha.toml >/dev/null
instance_config beta 27102 9302 | ct tee /etc/queryd/beta.toml >/dev/null
ishow() { ct systemctl show -p "$2" --value "queryd@$1.service"; }
ijournal() { ct journalctl -u "queryd@$1.service" --no-pager -n 30 -o short-monotonic >&2 || true; }
ianswer() { ct "$qbin" query -proto "${3:-a2s}" -timeout 2s "127.0.0.1:$2" 2>/dev/null; }
iname_is() { # NAME PORT SERVER_NAME [PROTO]: A2S's "name" or GameSpy4's "hostname"
	local key=name
	[ "${4:-a2s}" = gamespy4 ] && key=hostname
	ianswer "$1" "$2" "${4:-a2s}" | grep -qF "\"$key\": \"$3\""
}
ct systemctl enable --now queryd@alpha.service queryd@beta.service >"$work/istart.log" 2>&1 ||
	{ cat "$work/istart.log"; ijournal alpha; ijournal beta; fail "systemctl enable --now queryd@alpha queryd@beta"; }
for i in alpha:27101 beta:27102; do
	n=${i%%:*} port=${i#*:}
	[ "$(ishow "$n" ActiveState)/$(ishow "$n" SubState)" = active/running ] ||
		{ ijournal "$n"; fail "queryd@$n: $(ishow "$n" ActiveState)/$(ishow "$n" SubState) after enable --now"; }
	iname_is "$n" "$port" "Instance $n" || { ijournal "$n"; fail "queryd@$n does not answer A2S on 127.0.0.1:$port with its own name"; }
	iname_is "$n" "$port" "Instance $n" gamespy4 || { ijournal "$n"; fail "queryd@$n does not answer GameSpy4 on 127.0.0.1:$port with its own name"; }
	sock=$(ct stat -c '%A %U:%G' "/run/queryd-$n/feed.sock") || fail "queryd@$n: no feed socket /run/queryd-$n/feed.sock"
	[ "$sock" = "srw-rw---- queryd:queryd" ] || fail "queryd@$n: feed socket $sock, want srw-rw---- queryd:queryd"
	ct "$qbin" check -config "/etc/queryd/$n.toml" >/dev/null 2>&1 || fail "queryd check /etc/queryd/$n.toml"
done
ct systemctl is-enabled queryd@alpha.service >/dev/null || fail "queryd@alpha is not enabled"
apid=$(ishow alpha MainPID) bpid=$(ishow beta MainPID)
[ "$apid" != "$bpid" ] || fail "the two instances share a main PID"
pass "queryd@alpha and queryd@beta: active (running) at once (PIDs $apid, $bpid), each answering A2S and GameSpy4 with its own name on its own port, feed sockets /run/queryd-alpha/ and /run/queryd-beta/ $sock"

echo '{"op":"patch","state":{"name":"Fed alpha"}}' | ct "$qbin" push -socket /run/queryd-alpha/feed.sock >/dev/null ||
	fail "queryd push to /run/queryd-alpha/feed.sock"
wait_for 5 iname_is alpha 27101 "Fed alpha" || fail "the feed of queryd@alpha is not served"
iname_is beta 27102 "Instance beta" || fail "feeding queryd@alpha changed what queryd@beta serves"
ct sed -i 's/^name = "Instance beta"$/name = "Reloaded beta"/' /etc/queryd/beta.toml
ct systemctl reload queryd@beta.service || { ijournal beta; fail "systemctl reload queryd@beta"; }
wait_for 5 iname_is beta 27102 "Reloaded beta" || fail "the reloaded name of queryd@beta is not served"
[ "$(ishow beta MainPID)" = "$bpid" ] || fail "reload changed queryd@beta's main PID"
iname_is alpha 27101 "Fed alpha" || fail "reloading queryd@beta changed queryd@alpha"
pass "each instance is its own: a feed to alpha's socket changes alpha only; systemctl reload queryd@beta applies beta.toml, PID $bpid kept"

# [listen] socket = "uring": the unit's system call filter (@system-service,
# which holds @aio) lets queryd set up its io_uring receive loops; a drop-in
# that takes io_uring_setup out of it (as a container runtime's seccomp
# profile does) makes queryd say so and serve on the batch layer.
bjournal() { ct journalctl "_PID=$(ishow beta MainPID)" --no-pager -o cat 2>/dev/null; }
uring_started() { bjournal | grep -q 'io_uring receive loops started'; }
uring_refused() { bjournal | grep -q 'io_uring unavailable'; }
ct sed -i 's/^\[listen\]$/[listen]\nsocket = "uring"/' /etc/queryd/beta.toml
ct systemctl restart queryd@beta.service || { ijournal beta; fail "systemctl restart queryd@beta with socket = \"uring\""; }
wait_for 5 iname_is beta 27102 "Reloaded beta" || { ijournal beta; fail "queryd@beta with socket = \"uring\" does not answer"; }
wait_for 5 uring_started || { ijournal beta; fail "queryd@beta with socket = \"uring\" under the unit's filter: no 'io_uring receive loops started' in its journal"; }
pass "socket = \"uring\" under the unit's filter: io_uring receive loops started, answering"
ct mkdir -p /etc/systemd/system/queryd@beta.service.d
printf '[Service]\nSystemCallFilter=~io_uring_setup\n' | ct tee /etc/systemd/system/queryd@beta.service.d/no-uring.conf >/dev/null
ct systemctl daemon-reload
ct systemctl restart queryd@beta.service || { ijournal beta; fail "systemctl restart queryd@beta without io_uring_setup"; }
wait_for 5 iname_is beta 27102 "Reloaded beta" || { ijournal beta; fail "queryd@beta without io_uring_setup does not answer"; }
wait_for 5 uring_refused || { ijournal beta; fail "queryd@beta without io_uring_setup: the journal does not say that io_uring was refused"; }
! uring_started || fail "queryd@beta without io_uring_setup says its io_uring loops started"
pass "without io_uring_setup (SystemCallFilter=~io_uring_setup): '$(bjournal | grep -o 'io_uring unavailable.*' | head -n 1 | cut -c1-120)', answered on the batch layer"
ct rm -r /etc/systemd/system/queryd@beta.service.d
ct systemctl daemon-reload

ct systemd-analyze security --no-pager queryd@alpha.service >"$work/isecurity" 2>&1 || true
exposure=$(sed -n 's/.*Overall exposure level for queryd@alpha.service: \([0-9.]*\).*/\1/p' "$work/isecurity")
[ -n "$exposure" ] || { cat "$work/isecurity"; fail "systemd-analyze security queryd@alpha printed no exposure"; }
awk -v e="$exposure" 'BEGIN { exit !(e <= 2.0) }' || { cat "$work/isecurity"; fail "systemd-analyze security queryd@alpha: exposure $exposure, above 2.0"; }
ct systemctl stop queryd@alpha.service || fail "systemctl stop queryd@alpha"
result="$(ishow alpha ActiveState) Result=$(ishow alpha Result) status=$(ishow alpha ExecMainStatus)"
[ "$result" = "inactive Result=success status=0" ] || fail "queryd@alpha after stop: $result"
ct test ! -e /run/queryd-alpha || fail "/run/queryd-alpha is left after stop"
iname_is beta 27102 "Reloaded beta" || fail "stopping queryd@alpha stopped queryd@beta's answers"
pass "systemd-analyze security queryd@alpha: exposure $exposure (≤ 2.0); stopping alpha: $result, /run/queryd-alpha removed, beta still answers"

# The package's removal, then the unit header's own steps for a manual
# install: its `go build` runs here (output into the tree), the rest inside
# the container from a copy of the repository's files, with a user "game"
# for the usermod step.
ct dpkg --purge queryd >"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log"; fail "dpkg --purge queryd"; }
ct test ! -e /usr/lib/systemd/system/queryd.service || fail "dpkg --purge left the unit behind"
ct test ! -e /usr/lib/systemd/system/queryd@.service || fail "dpkg --purge left the template unit behind"
[ "$(ishow beta ActiveState)" = inactive ] || fail "dpkg --purge left queryd@beta $(ishow beta ActiveState)"
ct sh -c '! ls /etc/systemd/system/*.wants/queryd@* 2>/dev/null' || fail "dpkg --purge left enabled instances: $(ct sh -c 'ls /etc/systemd/system/*.wants/queryd@*')"
pass "dpkg --purge queryd: the package, its units and the instances (stopped, disabled) are gone"
# The steps: the "#   " lines of the first indented block of the header.
awk '/^#   /{sub(/^#   /, ""); print; found=1; next} found{exit}' deploy/systemd/queryd.service >"$work/steps"
grep -q 'go build' "$work/steps" && grep -q 'systemctl' "$work/steps" ||
	{ cat "$work/steps"; fail "no install steps found in deploy/systemd/queryd.service's header"; }
mkdir -p "$work/root/root/src/deploy/systemd"
cp deploy/systemd/queryd.service deploy/systemd/queryd.sysusers "$work/root/root/src/deploy/systemd/"
cp queryd.toml.example "$work/root/root/src/"
ct useradd --system game
while IFS= read -r step; do
	step=${step%%#*}
	step=${step//<the game server?s user>/game}
	if [[ "$step" == *"go build"* ]]; then
		(eval "GOFLAGS= ${step//\/usr\/local\/bin\/queryd/$work/root/usr/local/bin/queryd}") || fail "header step on the host: $step"
	else
		ct sh -c "cd /root/src && $step" >>"$work/steps.log" 2>&1 || { cat "$work/steps.log"; journal; fail "header step: $step"; }
	fi
done <"$work/steps"
[ "$(show ActiveState)/$(show SubState)" = active/running ] || fail "after the header's steps: $(show ActiveState)/$(show SubState)"
ct cat "/proc/$(show MainPID)/cmdline" | tr '\0' ' ' | grep -q '^/usr/local/bin/queryd ' ||
	fail "the manually installed unit does not run /usr/local/bin/queryd"
qbin=/usr/local/bin/queryd
wait_for 5 name_is "My Server" || { journal; fail "the manually installed queryd does not answer A2S"; }
ct id -nG game | grep -qw queryd || fail "the header's usermod step did not put game in the queryd group"
ct systemctl stop queryd.service || fail "systemctl stop of the manually installed unit"
pass "the unit header's $(wc -l <"$work/steps") install steps: active (running) from /usr/local/bin/queryd, answers A2S, game in group queryd, stops cleanly"

ct systemctl poweroff --no-block >/dev/null 2>&1 || true
wait_for 30 eval '! kill -0 "$nspawn" 2>/dev/null' || say "the container did not power off within 30 s: killed"
