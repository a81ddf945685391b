// SPDX-License-Identifier: MIT
// QuerydFeed.cs: feed a game server's state to queryd, from Unity (Mono,
// .NET Standard 2.1) or .NET. One file, no dependencies. See README.md.
//
// Calls never block the game's frame: Replace and Patch change a local copy
// of the state and queue what to send (bounded; when the queue is full the
// whole newest state is sent instead); a background thread connects (the
// Unix socket where the platform has one, else the HTTP feed), sends, pings
// on a timer and reconnects with backoff, sending the whole last state
// again after each reconnect. Errors go to the Error event (raised on the
// background thread).
using System;
using System.Collections;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Threading;

namespace Queryd
{
    /// <summary>Where and how a <see cref="Feed"/> sends.</summary>
    public sealed class FeedOptions
    {
        /// <summary>The feed socket ([feed] socket), used where the platform has Unix sockets; null: HTTP only.</summary>
        public string SocketPath = "/run/queryd/feed.sock";
        /// <summary>The HTTP feed ([feed] http), e.g. "http://127.0.0.1:27017"; used when the socket cannot be.</summary>
        public string HttpUrl;
        /// <summary>The HTTP feed's token (the content of [feed] http_token_file).</summary>
        public string Token;
        /// <summary>A keep-alive this often when nothing else is sent: well under [feed] stale_after (60 s).</summary>
        public TimeSpan PingEvery = TimeSpan.FromSeconds(10);
        /// <summary>The first reconnect delay, doubled up to BackoffMax.</summary>
        public TimeSpan BackoffMin = TimeSpan.FromMilliseconds(100);
        public TimeSpan BackoffMax = TimeSpan.FromSeconds(5);
        /// <summary>A send or reply taking longer drops the connection.</summary>
        public TimeSpan Timeout = TimeSpan.FromSeconds(5);
        /// <summary>Patches queued; past it the whole state is sent instead.</summary>
        public int MaxQueue = 64;
    }

    /// <summary>
    /// Feeds a state to queryd from a background thread. Its methods are
    /// safe to call from any thread and return at once.
    /// </summary>
    public sealed class Feed : IDisposable
    {
        /// <summary>Connection errors and messages queryd rejected (raised on the background thread).</summary>
        public event Action<string> Error;

        readonly FeedOptions opts;
        readonly object mu = new object();
        readonly Thread worker;
        readonly Queue<string> pending = new Queue<string>();
        Dictionary<string, object> doc;
        bool needReplace, pingNow, stop;
        DateTime lastSent = DateTime.UtcNow;
        ITransport conn;

        public Feed(FeedOptions options)
        {
            opts = options ?? new FeedOptions();
            worker = new Thread(Run) { IsBackground = true, Name = "queryd feed" };
            worker.Start();
        }

        /// <summary>Whether the worker holds a connection now.</summary>
        public bool Connected { get { return Volatile.Read(ref conn) != null; } }

        /// <summary>Sets the whole state (queryd's "replace").</summary>
        public void Replace(IDictionary<string, object> state)
        {
            lock (mu)
            {
                doc = new Dictionary<string, object>();
                Json.Merge(doc, state);
                needReplace = true;
                pending.Clear();
                Monitor.PulseAll(mu);
            }
        }

        /// <summary>
        /// Merges an RFC 7386 merge patch (queryd's "patch"): a player joins
        /// with {"players":{"7":{…}}} and leaves with {"players":{"7":null}}.
        /// </summary>
        public void Patch(IDictionary<string, object> patch)
        {
            lock (mu)
            {
                if (doc == null) doc = new Dictionary<string, object>();
                Json.Merge(doc, patch);
                if (!needReplace)
                {
                    if (pending.Count >= opts.MaxQueue)
                    {
                        pending.Clear();
                        needReplace = true; // newest state wins
                    }
                    else
                    {
                        pending.Enqueue(Json.Write(patch));
                    }
                }
                Monitor.PulseAll(mu);
            }
        }

        /// <summary>Asks for a keep-alive now (one is also sent every PingEvery).</summary>
        public void Ping()
        {
            lock (mu)
            {
                pingNow = true;
                Monitor.PulseAll(mu);
            }
        }

        /// <summary>Stops the background thread and closes the connection.</summary>
        public void Dispose()
        {
            lock (mu)
            {
                stop = true;
                Monitor.PulseAll(mu);
            }
            worker.Join(opts.Timeout + TimeSpan.FromSeconds(1));
            Close();
        }

        void Report(string msg)
        {
            var h = Error;
            if (h == null) return;
            try { h(msg); } catch (Exception) { } // a throwing handler must not end the worker
        }

        // Next waits for the next message to send (null when stopping).
        Message Next()
        {
            lock (mu)
            {
                for (;;)
                {
                    if (stop) return null;
                    if (needReplace && doc != null)
                    {
                        needReplace = false;
                        pending.Clear();
                        return new Message("replace", Json.Write(doc));
                    }
                    if (pending.Count > 0) return new Message("patch", pending.Dequeue());
                    var due = lastSent + opts.PingEvery - DateTime.UtcNow;
                    if (pingNow || due <= TimeSpan.Zero)
                    {
                        pingNow = false;
                        return new Message("ping", null);
                    }
                    Monitor.Wait(mu, due);
                }
            }
        }

        void Run()
        {
            var backoff = opts.BackoffMin;
            Message m = null;
            for (;;)
            {
                lock (mu) { if (stop) return; }
                if (conn == null)
                {
                    try
                    {
                        Volatile.Write(ref conn, Dial());
                    }
                    catch (Exception e)
                    {
                        Report("connect: " + e.Message);
                        lock (mu) { if (!stop) Monitor.Wait(mu, backoff); }
                        backoff = TimeSpan.FromTicks(Math.Min(backoff.Ticks * 2, opts.BackoffMax.Ticks));
                        continue;
                    }
                    backoff = opts.BackoffMin;
                    lock (mu) { needReplace = doc != null; } // queryd may have restarted: send the whole last state
                    m = null;
                }
                if (m == null) m = Next();
                if (m == null) return;
                string reply;
                try
                {
                    reply = conn.Send(m.Op, m.Body);
                }
                catch (Exception e)
                {
                    Close();
                    Report(m.Op + ": " + e.Message);
                    lock (mu) { needReplace = doc != null; } // what was in flight may be lost
                    m = null;
                    continue;
                }
                lock (mu) { lastSent = DateTime.UtcNow; }
                if (!reply.StartsWith("{\"ok\":true", StringComparison.Ordinal))
                    Report("queryd rejected " + m.Op + ": " + reply);
                m = null;
            }
        }

        ITransport Dial()
        {
            Exception unix = null;
            if (!string.IsNullOrEmpty(opts.SocketPath))
            {
                try { return new UnixTransport(opts.SocketPath, opts.Timeout); }
                catch (Exception e) { unix = e; }
            }
            if (!string.IsNullOrEmpty(opts.HttpUrl)) return new HttpTransport(opts.HttpUrl, opts.Token, opts.Timeout);
            if (unix != null) throw unix;
            throw new InvalidOperationException("neither SocketPath nor HttpUrl is set");
        }

        void Close()
        {
            var c = Interlocked.Exchange(ref conn, null);
            if (c != null) c.Dispose();
        }

        sealed class Message
        {
            public readonly string Op, Body;
            public Message(string op, string body) { Op = op; Body = body; }
        }
    }

    interface ITransport : IDisposable
    {
        // Send sends one message (op "replace", "patch" or "ping"; body the state JSON) and returns queryd's reply JSON.
        string Send(string op, string body);
    }

    // UnixTransport speaks NDJSON over the feed socket.
    sealed class UnixTransport : ITransport
    {
        readonly Socket sock;
        readonly NetworkStream stream;
        readonly List<byte> line = new List<byte>();
        readonly byte[] buf = new byte[4096];
        int bufLen, bufPos;

        public UnixTransport(string path, TimeSpan timeout)
        {
            sock = new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified);
            try
            {
                sock.SendTimeout = sock.ReceiveTimeout = (int)timeout.TotalMilliseconds;
                sock.Connect(new UnixDomainSocketEndPoint(path));
            }
            catch
            {
                sock.Dispose();
                throw;
            }
            stream = new NetworkStream(sock, true);
        }

        public string Send(string op, string body)
        {
            var msg = body == null ? "{\"op\":\"" + op + "\"}\n" : "{\"op\":\"" + op + "\",\"state\":" + body + "}\n";
            var b = Encoding.UTF8.GetBytes(msg);
            stream.Write(b, 0, b.Length);
            line.Clear();
            for (;;)
            {
                if (bufPos == bufLen)
                {
                    bufLen = stream.Read(buf, 0, buf.Length);
                    bufPos = 0;
                    if (bufLen <= 0) throw new IOException("queryd closed the connection");
                }
                var c = buf[bufPos++];
                if (c == '\n') return Encoding.UTF8.GetString(line.ToArray());
                line.Add(c);
                if (line.Count > 1 << 20) throw new IOException("reply too long");
            }
        }

        public void Dispose() { stream.Dispose(); }
    }

    // HttpTransport uses the HTTP feed: PUT/PATCH /v1/state, POST /v1/ping.
    sealed class HttpTransport : ITransport
    {
        readonly string baseUrl, token;
        readonly int timeoutMs;

        public HttpTransport(string url, string token, TimeSpan timeout)
        {
            baseUrl = url.TrimEnd('/');
            this.token = token;
            timeoutMs = (int)timeout.TotalMilliseconds;
            Send("ping", null); // "connected" once queryd answers
        }

        public string Send(string op, string body)
        {
            string method = "POST", path = "/v1/ping", type = "application/json";
            if (op == "replace") { method = "PUT"; path = "/v1/state"; }
            if (op == "patch") { method = "PATCH"; path = "/v1/state"; type = "application/merge-patch+json"; }
            var req = (HttpWebRequest)WebRequest.Create(baseUrl + path);
            req.Method = method;
            req.Timeout = req.ReadWriteTimeout = timeoutMs;
            req.Proxy = null; // loopback: never through a proxy
            req.Headers[HttpRequestHeader.Authorization] = "Bearer " + token;
            var b = Encoding.UTF8.GetBytes(body ?? "");
            req.ContentType = type;
            req.ContentLength = b.Length;
            if (b.Length > 0)
                using (var s = req.GetRequestStream()) s.Write(b, 0, b.Length);
            HttpWebResponse res;
            try
            {
                res = (HttpWebResponse)req.GetResponse();
            }
            catch (WebException e)
            {
                // 400, 404, 405, 413: queryd's answer, with its error; a 401 or 503 (or none) drops the connection.
                res = e.Response as HttpWebResponse;
                if (res == null || (int)res.StatusCode >= 500 || res.StatusCode == HttpStatusCode.Unauthorized)
                {
                    if (res != null) res.Dispose();
                    throw;
                }
            }
            using (res)
            using (var rd = new StreamReader(res.GetResponseStream(), Encoding.UTF8))
                return rd.ReadToEnd().TrimEnd('\n');
        }

        public void Dispose() { }
    }

    /// <summary>A minimal JSON writer and RFC 7386 merge for the state document.</summary>
    public static class Json
    {
        /// <summary>
        /// Writes v as JSON: null, bool, string, char, integers, float,
        /// double, decimal, IDictionary (keys as strings) and IEnumerable.
        /// </summary>
        public static string Write(object v)
        {
            var sb = new StringBuilder();
            Write(sb, v);
            return sb.ToString();
        }

        static void Write(StringBuilder sb, object v)
        {
            if (v == null) { sb.Append("null"); return; }
            if (v is bool) { sb.Append((bool)v ? "true" : "false"); return; }
            if (v is string) { WriteString(sb, (string)v); return; }
            if (v is char) { WriteString(sb, v.ToString()); return; }
            if (v is float) { WriteDouble(sb, (float)v); return; }
            if (v is double) { WriteDouble(sb, (double)v); return; }
            if (v is decimal) { sb.Append(((decimal)v).ToString(CultureInfo.InvariantCulture)); return; }
            var dict = v as IDictionary;
            if (dict != null)
            {
                sb.Append('{');
                var first = true;
                foreach (DictionaryEntry e in dict)
                {
                    if (!first) sb.Append(',');
                    first = false;
                    WriteString(sb, Convert.ToString(e.Key, CultureInfo.InvariantCulture));
                    sb.Append(':');
                    Write(sb, e.Value);
                }
                sb.Append('}');
                return;
            }
            var list = v as IEnumerable;
            if (list != null)
            {
                sb.Append('[');
                var first = true;
                foreach (var item in list)
                {
                    if (!first) sb.Append(',');
                    first = false;
                    Write(sb, item);
                }
                sb.Append(']');
                return;
            }
            var n = v as IFormattable; // the integer types
            if (n != null) { sb.Append(n.ToString(null, CultureInfo.InvariantCulture)); return; }
            WriteString(sb, v.ToString());
        }

        static void WriteDouble(StringBuilder sb, double d)
        {
            if (double.IsNaN(d) || double.IsInfinity(d)) sb.Append("null");
            else sb.Append(d.ToString("R", CultureInfo.InvariantCulture));
        }

        static void WriteString(StringBuilder sb, string s)
        {
            sb.Append('"');
            foreach (var c in s)
            {
                switch (c)
                {
                    case '"': sb.Append("\\\""); break;
                    case '\\': sb.Append("\\\\"); break;
                    case '\n': sb.Append("\\n"); break;
                    case '\r': sb.Append("\\r"); break;
                    case '\t': sb.Append("\\t"); break;
                    default:
                        if (c < 0x20) sb.Append("\\u").Append(((int)c).ToString("x4"));
                        else sb.Append(c);
                        break;
                }
            }
            sb.Append('"');
        }

        /// <summary>Applies an RFC 7386 merge patch to target, copying what it keeps.</summary>
        public static void Merge(Dictionary<string, object> target, IDictionary<string, object> patch)
        {
            if (patch == null) return;
            foreach (var kv in patch)
            {
                if (kv.Value == null)
                {
                    target.Remove(kv.Key);
                }
                else if (kv.Value is IDictionary<string, object>)
                {
                    var sub = (IDictionary<string, object>)kv.Value;
                    object cur;
                    var inner = target.TryGetValue(kv.Key, out cur) ? cur as Dictionary<string, object> : null;
                    if (inner == null) target[kv.Key] = inner = new Dictionary<string, object>();
                    Merge(inner, sub);
                }
                else
                {
                    target[kv.Key] = kv.Value;
                }
            }
        }
    }
}
