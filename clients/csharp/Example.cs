// SPDX-License-Identifier: MIT
// Example.cs: a game server's main loop feeding queryd (QuerydFeed.cs).
//
//   mcs -out:example.exe QuerydFeed.cs Example.cs && mono example.exe
//
// QUERYD_FEED_SOCKET (the Unix socket) or QUERYD_FEED_HTTP with
// QUERYD_FEED_TOKEN (the HTTP feed) say where to feed; QUERYD_FEED_PING the
// ping interval in seconds (default 10); QUERYD_EXAMPLE_SECONDS how long to
// run (default 600). It sets the state, has a player join, another leave and
// a score change, then runs frames of 16 ms that patch a tick counter ten
// times a second, printing the slowest feed call so far twice a second.
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Threading;
using Queryd;

static class Example
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

        long slowest = 0;
        var sw = new Stopwatch();
        Action<Action> timed = call =>
        {
            sw.Restart();
            call();
            slowest = Math.Max(slowest, sw.ElapsedTicks * 1000000 / Stopwatch.Frequency);
        };
        timed(() => feed.Replace(Obj(
            "name", "Ünïcødé ✓ Server",
            "map", "de_dust2",
            "max_players", 16,
            "players", Obj("1", Obj("name", "Zoë", "score", 3), "2", Obj("name", "Łukasz", "score", 7)),
            "rules", Obj("motd", "say \"hi\" \\o/"))));
        Thread.Sleep(200);
        timed(() => feed.Patch(Obj("players", Obj("3", Obj("name", "Σωκράτης", "score", 1))))); // joins
        Thread.Sleep(200);
        timed(() => feed.Patch(Obj("players", Obj("2", null)))); // leaves
        timed(() => feed.Patch(Obj("players", Obj("1", Obj("score", 5)))));
        Console.WriteLine("fed");

        var end = DateTime.UtcNow.AddSeconds(int.Parse(Env("QUERYD_EXAMPLE_SECONDS", "600")));
        for (long frame = 1; DateTime.UtcNow < end; frame++)
        {
            if (frame % 6 == 0) timed(() => feed.Patch(Obj("values", Obj("tick", frame))));
            if (frame % 30 == 0) Console.WriteLine("slowest call: " + slowest + " us");
            Thread.Sleep(16);
        }
        feed.Dispose();
    }
}
