#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Run by clients/TestPythonRecover against a live queryd (or one not started
yet) through feeder.py's Feed, over QUERYD_FEED_SOCKET: the good state at
once, a patch queryd rejects (score 1.5) after 1 s unless
QUERYD_RECOVER_BAD=0, a good patch (a player joins) after 1.5 s, a tick patch
every 100 ms; each rejection printed as "rejected OP: ERROR". It runs for
QUERYD_EXAMPLE_SECONDS (default 60). The same timeline as the other
languages' recover tests (clients/recover_test.go)."""

import os
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ beside the example
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from feeder import Feed, Rejected  # noqa: E402


def say(line):
    print(line, flush=True)


def call(f, *args):
    try:
        f(*args)
    except Rejected as err:
        say(f"rejected {err.op}: {err}")


def main():
    feed = Feed(os.environ["QUERYD_FEED_SOCKET"], on_rejected=lambda err: say(f"rejected {err.op}: {err}"))
    bad = os.environ.get("QUERYD_RECOVER_BAD", "1") != "0"
    start = time.monotonic()
    end = start + float(os.environ.get("QUERYD_EXAMPLE_SECONDS", "60"))
    call(feed.replace, {"name": "recover test", "map": "good_map", "max_players": 8,
                        "players": {"1": {"name": "Zoë", "score": 3}}})
    say("good")
    step, tick = 1, 0
    while time.monotonic() < end:
        time.sleep(0.1)
        now = time.monotonic() - start
        if step == 1 and now >= 1.0:
            if bad:
                call(feed.patch, {"players": {"1": {"score": 1.5}}})
                say("bad")
            step = 2
        if step == 2 and now >= 1.5:
            call(feed.patch, {"players": {"2": {"name": "Later", "score": 2}}})
            say("later")
            step = 3
        tick += 1
        call(feed.patch, {"values": {"tick": tick}})
    feed.close()


if __name__ == "__main__":
    main()
