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

The Feed keeps the last document queryd accepted (its last accepted replace
with the patches accepted since merged in) and the changes not answered yet.
A change queryd rejects is dropped (Rejected is raised, or given to
on_rejected), so it never reaches that document. Calls wait for queryd's
answer (up to timeout) while connected; while queryd is down they keep the
change and return None at once (at most max_queue patches, past it folded
into one replace of the newest state). The first call after the backoff
(0.1 s doubling to 5 s) connects again, sends the accepted document first,
then the kept changes in order, each checked again.
"""

import copy
import json
import os
import socket
import sys
import time


def default_socket():
    """The socket path of [feed] socket = "", found as `queryd push` finds it."""
    runtime_dir = os.environ.get("XDG_RUNTIME_DIR")
    if runtime_dir:
        return os.path.join(runtime_dir, "queryd", "feed.sock")
    tmp = os.environ.get("TMPDIR") or "/tmp"
    return os.path.join(tmp, f"queryd-{os.getuid()}", "feed.sock")


class Rejected(Exception):
    """queryd replied {"ok": false, "error": ...}: the change is dropped."""

    def __init__(self, message, op=None, change=None, reply=None):
        super().__init__(message)
        self.op = op  # "replace", "patch", "ping" or "get"
        self.change = change  # the document or merge patch sent
        self.reply = reply  # queryd's answer


def merge_patch(target, patch):
    """RFC 7386: a copy of target (a dict or None) with patch merged in."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


class _Change:
    def __init__(self, replace, doc, folded=False):
        self.replace, self.doc, self.folded = replace, doc, folded
        self.reply = self.error = None


class Feed:
    """A feed connection that keeps what queryd accepted and reconnects."""

    def __init__(self, path, timeout=5.0, max_queue=64, on_rejected=None):
        self.path, self.timeout, self.max_queue = path, timeout, max_queue
        self.on_rejected = on_rejected  # told of a kept change rejected later; None: raised
        self.sock = self.replies = None
        self.accepted = None  # the last document queryd accepted
        self.pending = []  # changes not answered yet, oldest first
        self.backoff, self.retry_at = 0.0, 0.0

    def connect(self):
        """Connects now (if not connected), then sends what queryd accepted; raises OSError."""
        if self.sock is not None:
            return
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(self.path)
        except OSError as err:
            sock.close()
            self.backoff = min(max(self.backoff * 2, 0.1), 5.0)
            self.retry_at = time.monotonic() + self.backoff
            raise OSError(err.errno, f"cannot connect to the feed socket {self.path}: {err.strerror}"
                          " (is queryd running? give its [feed] socket as SOCKET"
                          " or in QUERYD_FEED_SOCKET)") from None
        self.sock, self.replies = sock, sock.makefile("rb")
        self.backoff, self.retry_at = 0.0, 0.0
        if self.accepted is not None:  # queryd may have restarted: what it accepted comes first
            if not self._round({"op": "replace", "state": self.accepted}).get("ok"):
                self.accepted = None  # even that: a queryd with other rules

    def _round(self, msg):
        """Sends one message and returns its reply; on a connection error, drops it and raises."""
        try:
            self.sock.sendall(json.dumps(msg, ensure_ascii=False).encode("utf-8") + b"\n")
            line = self.replies.readline()
            if not line:
                raise ConnectionError("queryd closed the feed connection")
            return json.loads(line)
        except (OSError, ValueError):
            self._drop()
            raise

    def _drop(self):
        if self.sock is not None:
            self.replies.close()
            self.sock.close()
        self.sock = self.replies = None

    def _ready(self):
        """Connects when due; returns whether connected."""
        if self.sock is None and time.monotonic() >= self.retry_at:
            try:
                self.connect()
            except (OSError, ValueError):
                pass
        return self.sock is not None

    def _flush(self, own=None):
        """Sends the kept changes in order; returns the rejections of others than own."""
        rejected, lost = [], 0
        while self.pending and lost < 2 and self._ready():
            ch = self.pending[0]
            op = "replace" if ch.replace else "patch"
            try:
                reply = self._round({"op": op, "state": ch.doc})
            except (OSError, ValueError):
                lost += 1  # an old connection, which a queryd restart ends: connect again at once
                continue
            self.pending.pop(0)
            ch.reply = reply
            if reply.get("ok"):
                self.accepted = copy.deepcopy(ch.doc) if ch.replace else merge_patch(self.accepted, ch.doc)
                continue
            ch.error = Rejected(reply.get("error", "rejected without a reason"), op, ch.doc, reply)
            if ch is not own:
                rejected.append(ch.error)
        return rejected

    def _change(self, ch):
        if ch.replace:
            self.pending.clear()  # newest state wins
        self.pending.append(ch)
        if sum(1 for c in self.pending if not c.replace) > self.max_queue:
            self._fold()
        others = self._flush(ch)
        for err in others:
            if self.on_rejected is not None:
                self.on_rejected(err)
        if others and self.on_rejected is None:
            raise others[0]
        if ch.error is not None:
            raise ch.error
        return ch.reply  # None: not answered yet, kept

    def _fold(self):
        doc = copy.deepcopy(self.accepted)
        for c in self.pending:
            doc = copy.deepcopy(c.doc) if c.replace else merge_patch(doc, c.doc)
        first = self.pending[0]
        self.pending = ([first] if first.replace and not first.folded else []) + [_Change(True, doc, True)]

    def _ask(self, msg):
        if not self._ready():
            raise ConnectionError(f"not connected to the feed socket {self.path}")
        reply = self._round(msg)
        if not reply.get("ok"):
            raise Rejected(reply.get("error", "rejected without a reason"), msg["op"], None, reply)
        return reply

    def replace(self, state):
        """Sets the whole state; returns queryd's reply (None: kept until it is back)."""
        return self._change(_Change(True, merge_patch(None, state)))

    def patch(self, state):
        """Merges an RFC 7386 merge patch; returns queryd's reply (None: kept)."""
        return self._change(_Change(False, copy.deepcopy(state)))

    def ping(self):
        """A keep-alive (after the kept changes); raises ConnectionError when queryd is down."""
        self._flush()
        return self._ask({"op": "ping"})

    def get(self):
        """queryd's current document in reply["state"]."""
        self._flush()
        return self._ask({"op": "get"})

    def close(self):
        self._drop()


def player(pid, fields):
    """A merge patch that sets one player's fields, or removes the player (None)."""
    return {"players": {str(pid): fields}}


def main():
    path = (sys.argv[1] if len(sys.argv) > 1 else None) or os.environ.get("QUERYD_FEED_SOCKET") or default_socket()
    feed = Feed(path)
    feed.connect()
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
