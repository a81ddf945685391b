// SPDX-License-Identifier: MIT
// QueueTest.cs: run by clients/TestCSharpQueue against a live queryd (see
// clients/cpp/queue_test.cpp, which it mirrors): 10 patches with queryd
// frozen through a Feed whose queue holds 2.
using System;
using System.Collections.Generic;
using System.Threading;
using Queryd;

static class QueueTest
{
    static Dictionary<string, object> Tick(int n)
    {
        return new Dictionary<string, object> { { "values", new Dictionary<string, object> { { "tick", n } } } };
    }

    static void Main()
    {
        var feed = new Feed(new FeedOptions
        {
            SocketPath = Environment.GetEnvironmentVariable("QUERYD_FEED_SOCKET"),
            MaxQueue = 2,
            PingEvery = TimeSpan.FromSeconds(1), // pings change no version
        });
        feed.Error += e => Console.Error.WriteLine("feed error: " + e);
        var state = Tick(0);
        state["name"] = "queue test";
        feed.Replace(state);
        while (!feed.Connected) Thread.Sleep(10);
        Thread.Sleep(300); // the replace answered
        Console.WriteLine("ready");
        Console.ReadLine();
        for (var tick = 1; tick <= 10; tick++) feed.Patch(Tick(tick));
        Console.WriteLine("patched");
        while (Console.ReadLine() != null) { }
        feed.Dispose();
    }
}
