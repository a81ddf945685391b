#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A queryd feeder for a game server written in Python (standard library only).

    python3 feeder.py [SOCKET]        (or QUERYD_FEED_SOCKET=... python3 feeder.py)

Without either it finds the socket as `queryd push` does (the place of
[feed] socket = "", the demo's): $XDG_RUNTIME_DIR/queryd/feed.sock, else
$TMPDIR (or /tmp)/queryd-<uid>/feed.sock. A packaged queryd's socket is
/run/queryd/feed.sock: give it as SOCKET.

It connects to queryd's feed socket, sends the whole state once, then merge
patches as players join, score and leave, a ping, and one message queryd
rejects (to show the error path). Copy the Feed class into your server: call
replace() on start, patch() on every change, and ping() every few seconds so
that queryd does not go silent ([feed] stale_after).
"""

import json
import os
import socket
import sys



def default_socket():
    """The socket path of [feed] socket = "", found as `queryd push` finds it."""
    runtime_dir = os.environ.get("XDG_RUNTIME_DIR")
    if runtime_dir:
        return os.path.join(runtime_dir, "queryd", "feed.sock")
    tmp = os.environ.get("TMPDIR") or "/tmp"
    return os.path.join(tmp, f"queryd-{os.getuid()}", "feed.sock")


class Rejected(Exception):
    """queryd replied {"ok": false, "error": ...}; nothing changed."""


class Feed:
    """One feed connection: NDJSON lines out, one reply line back for each."""

    def __init__(self, path, timeout=5.0):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        try:
            self.sock.connect(path)
        except OSError as err:
            self.sock.close()
            raise OSError(err.errno, f"cannot connect to the feed socket {path}: {err.strerror}"
                          " (is queryd running? give its [feed] socket as SOCKET"
                          " or in QUERYD_FEED_SOCKET)") from None
        self.replies = self.sock.makefile("rb")

    def send(self, msg):
        """Sends one message and returns its reply; raises Rejected on an error reply."""
        self.sock.sendall(json.dumps(msg, ensure_ascii=False).encode("utf-8") + b"\n")
        line = self.replies.readline()
        if not line:
            raise ConnectionError("queryd closed the feed connection")
        reply = json.loads(line)
        if not reply.get("ok"):
            raise Rejected(reply.get("error", "rejected without a reason"))
        return reply

    def replace(self, state):
        return self.send({"op": "replace", "state": state})

    def patch(self, state):
        return self.send({"op": "patch", "state": state})

    def ping(self):
        return self.send({"op": "ping"})

    def get(self):
        return self.send({"op": "get"})

    def close(self):
        self.replies.close()
        self.sock.close()


def player(pid, fields):
    """A merge patch that sets one player's fields, or removes the player (None)."""
    return {"players": {str(pid): fields}}


def main():
    path = (sys.argv[1] if len(sys.argv) > 1 else None) or os.environ.get("QUERYD_FEED_SOCKET") or default_socket()
    feed = Feed(path)
    steps = [
        ("replace", lambda: feed.replace({
            "name": "Python feeder example", "map": "example_map", "game": "Example Game",
            "max_players": 16,
            "players": {"1": {"name": "Alice", "score": 3, "ping": 20}},
            "rules": {"mp_timelimit": "30"},
        })),
        ("Bob joined", lambda: feed.patch(player(2, {"name": "Bob", "ping": 35}))),
        ("Carol joined", lambda: feed.patch(player(3, {"name": "Carol", "ping": 50}))),
        ("Bob scored", lambda: feed.patch(player(2, {"score": 10}))),
        ("Carol left", lambda: feed.patch(player(3, None))),
        ("ping", feed.ping),
    ]
    for what, send in steps:
        send()
        print(f"{what}: ok")

    # A rejected message changes nothing; the connection stays usable.
    try:
        feed.patch({"max_players": -1})
        raise SystemExit("feeder: queryd accepted max_players -1")
    except Rejected as err:
        print(f"rejected as expected: {err}")

    state = feed.get()["state"]
    players = state.get("players", {})
    listed = [f"{players[pid]['name']} {players[pid]['score']}" for pid in sorted(players, key=int)]
    print("players: " + ", ".join(listed))
    feed.close()


if __name__ == "__main__":
    try:
        main()
    except (OSError, ValueError) as err:
        print(f"feeder: {err}", file=sys.stderr)
        sys.exit(1)
