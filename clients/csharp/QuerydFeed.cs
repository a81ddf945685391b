// SPDX-License-Identifier: MIT
// QuerydFeed.cs: feed a game server's state to queryd, from Unity (Mono,
// .NET Standard 2.1) or .NET. One file, no dependencies. See README.md.
//
// Calls never block the game's frame: Replace and Patch queue the change
// (bounded; when the queue is full its patches are folded into one replace
// of the newest state) and a background thread connects (the Unix socket
// where the platform has one, else the HTTP feed), sends, pings on a timer
// and reconnects with backoff.
//
// It keeps two things: the last document queryd accepted (its last accepted
// replace with the patches it accepted since merged in) and the changes not
// answered yet. A change queryd rejects is dropped and raised as Rejected,
// so it never reaches the accepted document; after each (re)connect the
// accepted document is sent first, then the changes still pending, each
// checked again by queryd. Errors go to the Error event (raised on the
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

    /// <summary>A change queryd rejected: dropped, so the accepted document never has it.</summary>
    public sealed class Rejection
    {
        /// <summary>"replace" or "patch".</summary>
        public readonly string Op;
        /// <summary>The JSON sent: the document or the merge patch.</summary>
        public readonly string Change;
        /// <summary>queryd's answer, e.g. {"ok":false,"error":"state.players.1.score: …"}.</summary>
        public readonly string Reply;

        internal Rejection(string op, string change, string reply) { Op = op; Change = change; Reply = reply; }

        public override string ToString() { return "queryd rejected " + Op + " " + Change + ": " + Reply; }
    }

    /// <summary>
    /// Feeds a state to queryd from a background thread. Its methods are
    /// safe to call from any thread and return at once.
    /// </summary>
    public sealed class Feed : IDisposable
    {
        /// <summary>Connection errors and messages queryd rejected (raised on the background thread).</summary>
        public event Action<string> Error;

        /// <summary>
        /// A replace or patch queryd rejected (raised on the background thread,
        /// after Error): it is dropped, and the local copy no longer has it.
        /// </summary>
        public event Action<Rejection> Rejected;

        readonly FeedOptions opts;
        readonly object mu = new object();
        readonly Thread worker;
        // What queryd accepted last, and the changes not answered yet (oldest
        // first; inflight is the one sent and waiting for its answer).
        Dictionary<string, object> accepted;
        readonly List<Change> pending = new List<Change>();
        Change inflight;
        long generation; // counts Replace calls: a change from before the last one is superseded
        bool resync, pingNow, stop;
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

        /// <summary>The last document queryd accepted, as JSON (null before it accepted one).</summary>
        public string Accepted { get { lock (mu) return accepted == null ? null : Json.Write(accepted); } }

        /// <summary>Sets the whole state (queryd's "replace").</summary>
        public void Replace(IDictionary<string, object> state)
        {
            lock (mu)
            {
                var doc = new Dictionary<string, object>();
                Json.Merge(doc, state);
                pending.Clear(); // newest state wins
                pending.Add(new Change(true, doc, ++generation));
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
                pending.Add(new Change(false, Json.CopyPatch(patch), generation));
                var patches = 0;
                foreach (var c in pending) if (!c.Replace) patches++;
                if (patches > opts.MaxQueue) Fold();
                Monitor.PulseAll(mu);
            }
        }

        // Fold (mu held) turns the pending patches into one replace of the
        // newest state: the accepted document with every change not answered
        // yet merged in. A replace the game set itself stays ahead of it, so
        // that a rejected fold still leaves that one.
        void Fold()
        {
            var doc = Json.Copy(accepted);
            if (inflight != null) inflight.ApplyTo(ref doc);
            foreach (var c in pending) c.ApplyTo(ref doc);
            var own = pending.Count > 0 && pending[0].Replace && !pending[0].Folded ? pending[0] : null;
            pending.Clear();
            if (own != null) pending.Add(own);
            pending.Add(new Change(true, doc, generation) { Folded = true });
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
                    if (resync)
                    {
                        resync = false;
                        if (accepted != null) // queryd may have restarted: what it accepted comes first
                            return new Message("replace", Json.Write(accepted), new Change(true, accepted, generation) { Resync = true });
                    }
                    if (pending.Count > 0)
                    {
                        inflight = pending[0];
                        pending.RemoveAt(0);
                        return new Message(inflight.Replace ? "replace" : "patch", Json.Write(inflight.Doc), inflight);
                    }
                    var due = lastSent + opts.PingEvery - DateTime.UtcNow;
                    if (pingNow || due <= TimeSpan.Zero)
                    {
                        pingNow = false;
                        return new Message("ping", null, null);
                    }
                    Monitor.Wait(mu, due);
                }
            }
        }

        // Answered records queryd's answer to a change.
        void Answered(Message m, string reply)
        {
            var ok = reply.StartsWith("{\"ok\":true", StringComparison.Ordinal);
            lock (mu)
            {
                lastSent = DateTime.UtcNow;
                if (m.Change == null) { }
                else if (ok && m.Change.Replace) accepted = m.Change.Resync ? accepted : Json.Copy(m.Change.Doc);
                else if (ok) Json.Merge(accepted ?? (accepted = new Dictionary<string, object>()), m.Change.Doc);
                else if (m.Change.Resync) accepted = null; // even what it accepted before: a queryd with other rules
                if (inflight == m.Change) inflight = null;
            }
            if (ok) return;
            Report("queryd rejected " + m.Op + ": " + reply);
            var h = Rejected;
            if (m.Change == null || h == null) return;
            try { h(new Rejection(m.Op, m.Body, reply)); } catch (Exception) { }
        }

        // Lost puts a change whose answer never came back in front of the
        // pending ones (unless a Replace came since), to be sent after the
        // accepted document once connected again.
        void Lost(Message m)
        {
            lock (mu)
            {
                resync = true;
                if (inflight != m.Change || m.Change == null) return;
                inflight = null;
                if (m.Change.Generation == generation) pending.Insert(0, m.Change);
            }
        }

        void Run()
        {
            var backoff = opts.BackoffMin;
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
                    lock (mu) { resync = true; } // queryd may have restarted: send what it accepted, then the rest
                }
                var m = Next();
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
                    Lost(m); // it may or may not have arrived
                    continue;
                }
                Answered(m, reply);
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

        // Change is one Replace or Patch not answered yet (Doc is the
        // document or the merge patch, never changed once made).
        sealed class Change
        {
            public readonly bool Replace;
            public readonly Dictionary<string, object> Doc;
            public readonly long Generation;
            public bool Folded, Resync;

            public Change(bool replace, Dictionary<string, object> doc, long generation)
            {
                Replace = replace; Doc = doc; Generation = generation;
            }

            // ApplyTo applies the change to doc (null: none yet).
            public void ApplyTo(ref Dictionary<string, object> doc)
            {
                if (Replace) doc = Json.Copy(Doc);
                else Json.Merge(doc ?? (doc = new Dictionary<string, object>()), Doc);
            }
        }

        sealed class Message
        {
            public readonly string Op, Body;
            public readonly Change Change; // null for a ping
            public Message(string op, string body, Change change) { Op = op; Body = body; Change = change; }
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

        /// <summary>A copy of doc's objects (null stays null; members set to null are left out).</summary>
        public static Dictionary<string, object> Copy(IDictionary<string, object> doc)
        {
            if (doc == null) return null;
            var c = new Dictionary<string, object>();
            Merge(c, doc);
            return c;
        }

        /// <summary>A copy of a merge patch's objects, its nulls kept.</summary>
        public static Dictionary<string, object> CopyPatch(IDictionary<string, object> patch)
        {
            if (patch == null) return null;
            var c = new Dictionary<string, object>();
            foreach (var kv in patch)
            {
                var sub = kv.Value as IDictionary<string, object>;
                c[kv.Key] = sub != null ? CopyPatch(sub) : kv.Value;
            }
            return c;
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
