// SPDX-License-Identifier: MIT
// RecoverTest.cs: run by clients/TestCSharpRecover against a live queryd
// (or one not started yet). A game loop of 16 ms frames: the good state at
// once, a patch queryd rejects (score 1.5) after 1 s unless
// QUERYD_RECOVER_BAD=0, a good patch (a player joins) after 1.5 s, a tick
// patch every 100 ms; each rejection printed as "rejected OP: REPLY". It runs
// for QUERYD_EXAMPLE_SECONDS (default 60). The same timeline as
// clients/cpp/recover_test.cpp and the other languages' recover tests.
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Threading;
using Queryd;

static class RecoverTest
{
    static string Env(string name, string def)
    {
        var v = Environment.GetEnvironmentVariable(name);
        return string.IsNullOrEmpty(v) ? def : v;
    }

    static Dictionary<string, object> Obj(params object[] kv)
    {
        var d = new Dictionary<string, object>();
        for (var i = 0; i < kv.Length; i += 2) d[(string)kv[i]] = kv[i + 1];
        return d;
    }

    static void Say(string line)
    {
        lock (typeof(RecoverTest)) Console.WriteLine(line);
    }

    static void Main()
    {
        var feed = new Feed(new FeedOptions
        {
            SocketPath = Env("QUERYD_FEED_SOCKET", null),
            HttpUrl = Env("QUERYD_FEED_HTTP", null),
            Token = Env("QUERYD_FEED_TOKEN", null),
            PingEvery = TimeSpan.FromSeconds(int.Parse(Env("QUERYD_FEED_PING", "10"))),
        });
        feed.Error += e => Console.Error.WriteLine("feed error: " + e);
        feed.Rejected += r => Say("rejected " + r.Op + ": " + r.Reply);
        var bad = Env("QUERYD_RECOVER_BAD", "1") != "0";

        var clock = Stopwatch.StartNew();
        feed.Replace(Obj("name", "recover test", "map", "good_map", "max_players", 8,
            "players", Obj("1", Obj("name", "Zoë", "score", 3))));
        Say("good");
        var step = 1;
        var end = int.Parse(Env("QUERYD_EXAMPLE_SECONDS", "60")) * 1000L;
        long tick = 0, nextTick = 100;
        while (clock.ElapsedMilliseconds < end)
        {
            var now = clock.ElapsedMilliseconds;
            if (step == 1 && now >= 1000)
            {
                if (bad)
                {
                    feed.Patch(Obj("players", Obj("1", Obj("score", 1.5))));
                    Say("bad");
                }
                step = 2;
            }
            if (step == 2 && now >= 1500)
            {
                feed.Patch(Obj("players", Obj("2", Obj("name", "Later", "score", 2))));
                Say("later");
                step = 3;
            }
            if (now >= nextTick)
            {
                feed.Patch(Obj("values", Obj("tick", ++tick)));
                nextTick += 100;
            }
            Thread.Sleep(16);
        }
        feed.Dispose();
    }
}
