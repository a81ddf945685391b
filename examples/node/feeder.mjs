#!/usr/bin/env node
// SPDX-License-Identifier: MIT
// A queryd feeder for a game server written in Node.js — no dependencies.
//
//   node feeder.mjs [SOCKET]        (or QUERYD_FEED_SOCKET=... node feeder.mjs)
//
// Without either it finds the socket as `queryd push` does (the place of
// [feed] socket = "", the demo's): $XDG_RUNTIME_DIR/queryd/feed.sock, else
// $TMPDIR (or /tmp)/queryd-<uid>/feed.sock. A packaged queryd's socket is
// /run/queryd/feed.sock: give it as SOCKET.
//
// It connects to queryd's feed socket, sends the whole state once, then
// merge patches as players join, score and leave, a ping, and one message
// queryd rejects (to show the error path). Copy the Feed class into your
// server: call replace() on start and patch() on every change; it pings on
// its own so that queryd does not go silent ([feed] stale_after).
//
// The Feed keeps the last document queryd accepted (its last accepted
// replace with the patches accepted since merged in) and the changes not
// answered yet. A change queryd rejects is dropped (the 'rejected' event,
// and the call's promise rejects with a RejectedError), so it never reaches
// that document. When the connection is lost (queryd restarted) it
// reconnects with backoff (100 ms doubling to 5 s), sends the accepted
// document first, then the pending changes in order, each checked again.
// Calls never wait for queryd: they queue (at most maxQueue patches, past it
// folded into one replace of the newest state) and return a promise of the
// answer, which an ignored rejection cannot crash the process with.
import { EventEmitter } from 'node:events';
import net from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/** The socket path of [feed] socket = "", found as `queryd push` finds it. */
export function defaultSocket() {
  const runtimeDir = process.env.XDG_RUNTIME_DIR;
  if (runtimeDir) return path.join(runtimeDir, 'queryd', 'feed.sock');
  return path.join(process.env.TMPDIR || '/tmp', `queryd-${process.getuid()}`, 'feed.sock');
}

/** A rejected change: queryd replied {"ok":false,"error":...}; it is dropped. */
export class RejectedError extends Error {
  constructor(message, { op, change, reply } = {}) {
    super(message);
    this.op = op; // "replace", "patch", "ping" or "get"
    this.change = change; // the document or merge patch sent
    this.reply = reply; // queryd's answer
  }
}

const copy = (v) => (v === undefined ? undefined : JSON.parse(JSON.stringify(v)));

/** RFC 7386: target (an object or undefined) with patch merged in, as a new object. */
export function mergePatch(target, patch) {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return copy(patch);
  const out = target !== null && typeof target === 'object' && !Array.isArray(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/** A promise marked handled: a game that ignores it is not crashed by its rejection. */
function settled() {
  let resolve;
  let reject;
  const promise = new Promise((res, rej) => { resolve = res; reject = rej; });
  promise.catch(() => {});
  return { promise, resolve, reject };
}

/**
 * Feeds queryd over its socket (NDJSON: one reply line per line, in order),
 * one message at a time. Events: 'connect', 'disconnected' (err: a failed or
 * lost connection; it reconnects on its own), 'rejected' (a RejectedError).
 */
export class Feed extends EventEmitter {
  #path;
  #opts;
  #sock = null;
  #buf = '';
  #waiter = null; // the answer awaited: {resolve, reject}
  #accepted; // the last document queryd accepted (undefined before one)
  #pending = []; // changes not sent yet: {replace, doc, gen, folded, waiters}
  #inflight = null; // the change sent, its answer not read yet
  #extra = []; // pings and gets asked: {op, waiters}
  #gen = 0; // replace() calls: a change older than the last one is superseded
  #resync = false;
  #busy = false;
  #closed = false;
  #backoff;
  #lastSent = Date.now();
  #timer = null;

  /** Connects once and resolves with the Feed, or rejects naming the socket. */
  static connect(socketPath, options) {
    const feed = new Feed(socketPath, options);
    return new Promise((resolve, reject) => {
      feed.once('connect', () => { feed.off('disconnected', failed); resolve(feed); });
      const failed = (err) => {
        feed.close();
        reject(new Error(`cannot connect to the feed socket ${socketPath}: ${err.code || err.message}`
          + ' (is queryd running? give its [feed] socket as SOCKET or in QUERYD_FEED_SOCKET)'));
      };
      feed.once('disconnected', failed);
    });
  }

  constructor(socketPath, { pingEvery = 10000, backoffMin = 100, backoffMax = 5000, timeout = 5000, maxQueue = 64 } = {}) {
    super();
    this.#path = socketPath;
    this.#opts = { pingEvery, backoffMin, backoffMax, timeout, maxQueue };
    this.#backoff = backoffMin;
    this.#dial();
  }

  /** The last document queryd accepted (a copy; undefined before one). */
  get accepted() { return copy(this.#accepted); }

  /** Whether a connection is open now. */
  get connected() { return this.#sock !== null && !this.#sock.connecting; }

  /** Sets the whole state (queryd's "replace"); resolves with queryd's reply. */
  replace(state) {
    const waiters = this.#pending.flatMap((c) => c.waiters); // superseded: they settle with this one
    this.#gen++;
    this.#pending = [{ replace: true, doc: mergePatch(undefined, state), gen: this.#gen, folded: false, waiters }];
    return this.#queued(waiters);
  }

  /** Merges an RFC 7386 merge patch (queryd's "patch"); resolves with queryd's reply. */
  patch(patch) {
    const waiters = [];
    this.#pending.push({ replace: false, doc: copy(patch), gen: this.#gen, folded: false, waiters });
    if (this.#pending.filter((c) => !c.replace).length > this.#opts.maxQueue) this.#fold();
    return this.#queued(waiters);
  }

  /** A keep-alive now (one is also sent every pingEvery ms when idle). */
  ping() { return this.#ask('ping'); }

  /** Resolves with queryd's reply to "get" (its current document in .state). */
  get() { return this.#ask('get'); }

  /** Closes the connection and stops reconnecting. */
  close() {
    this.#closed = true;
    clearTimeout(this.#timer);
    if (this.#sock) this.#sock.end();
  }

  #queued(waiters) {
    const w = settled();
    waiters.push(w);
    this.#pump();
    return w.promise;
  }

  #ask(op) {
    const w = settled();
    this.#extra.push({ op, waiters: [w] });
    this.#pump();
    return w.promise;
  }

  // #fold turns the pending patches into one replace of the newest state;
  // a replace the game set itself stays ahead of it.
  #fold() {
    let doc = this.#accepted;
    for (const c of [this.#inflight, ...this.#pending]) {
      if (c) doc = c.replace ? c.doc : mergePatch(doc, c.doc);
    }
    const own = this.#pending[0]?.replace && !this.#pending[0].folded ? this.#pending.shift() : null;
    const waiters = this.#pending.flatMap((c) => c.waiters);
    this.#pending = [...(own ? [own] : []), { replace: true, doc: copy(doc), gen: this.#gen, folded: true, waiters }];
  }

  #dial() {
    if (this.#closed) return;
    const sock = net.createConnection({ path: this.#path });
    this.#sock = sock;
    sock.setEncoding('utf8');
    sock.on('connect', () => {
      this.#backoff = this.#opts.backoffMin;
      this.#resync = true; // queryd may have restarted: what it accepted comes first
      this.#arm();
      this.emit('connect');
      this.#pump();
    });
    sock.on('data', (chunk) => this.#onData(chunk));
    sock.on('error', () => {}); // 'close' follows
    sock.on('close', (hadError) => this.#lost(new Error(hadError ? `connection to ${this.#path} failed` : 'queryd closed the feed connection'), sock));
    sock.once('error', (err) => { sock.lastError = err; });
  }

  #lost(err, sock) {
    if (sock !== this.#sock) return;
    this.#sock = null;
    this.#buf = '';
    if (this.#waiter) this.#waiter.reject(sock.lastError || err);
    this.#waiter = null;
    if (this.#closed) return;
    this.emit('disconnected', sock.lastError || err);
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.#dial(), this.#backoff);
    this.#timer.unref();
    this.#backoff = Math.min(this.#backoff * 2, this.#opts.backoffMax);
  }

  #arm() {
    clearTimeout(this.#timer);
    const due = Math.max(0, this.#lastSent + this.#opts.pingEvery - Date.now());
    this.#timer = setTimeout(() => {
      if (!this.#extra.some((e) => e.op === 'ping')) this.#extra.push({ op: 'ping', waiters: [] });
      this.#pump();
    }, due);
    this.#timer.unref();
  }

  #onData(chunk) {
    this.#buf += chunk;
    let nl;
    while ((nl = this.#buf.indexOf('\n')) >= 0) {
      const line = this.#buf.slice(0, nl);
      this.#buf = this.#buf.slice(nl + 1);
      const w = this.#waiter;
      this.#waiter = null;
      if (!w) continue;
      try {
        w.resolve(JSON.parse(line));
      } catch (err) {
        w.reject(new Error(`bad reply line ${JSON.stringify(line)}: ${err.message}`));
      }
    }
  }

  // #round sends one message and resolves with its reply.
  #round(msg) {
    return new Promise((resolve, reject) => {
      this.#waiter = { resolve, reject };
      const timer = setTimeout(() => this.#sock?.destroy(new Error('no reply within the timeout')), this.#opts.timeout);
      this.#waiter.resolve = (v) => { clearTimeout(timer); resolve(v); };
      this.#waiter.reject = (e) => { clearTimeout(timer); reject(e); };
      this.#sock.write(JSON.stringify(msg) + '\n');
      this.#lastSent = Date.now();
    });
  }

  // #pump sends what is due, one message at a time.
  async #pump() {
    if (this.#busy) return;
    this.#busy = true;
    try {
      while (this.connected) {
        let msg;
        let change = null;
        let extra = null;
        if (this.#resync) {
          this.#resync = false;
          if (this.#accepted === undefined) continue;
          change = { replace: true, doc: this.#accepted, resync: true, waiters: [] };
        } else if (this.#pending.length > 0) {
          change = this.#pending.shift();
          this.#inflight = change;
        } else if (this.#extra.length > 0) {
          extra = this.#extra.shift();
          msg = { op: extra.op };
        } else {
          break;
        }
        if (change) msg = { op: change.replace ? 'replace' : 'patch', state: change.doc };
        let reply;
        try {
          reply = await this.#round(msg);
        } catch {
          if (change && this.#inflight === change) { // its answer never came: it goes first again
            this.#inflight = null;
            if (change.gen === this.#gen) this.#pending.unshift(change);
            else this.#pending[0]?.waiters.push(...change.waiters);
          }
          if (extra) this.#extra.unshift(extra);
          this.#resync = true;
          break;
        }
        if (change && this.#inflight === change) this.#inflight = null;
        this.#answered(msg, change, extra, reply);
        this.#arm();
      }
    } finally {
      this.#busy = false;
    }
  }

  #answered(msg, change, extra, reply) {
    const waiters = (change || extra).waiters;
    if (reply.ok) {
      if (change && !change.resync) this.#accepted = change.replace ? change.doc : mergePatch(this.#accepted, change.doc);
      for (const w of waiters) w.resolve(reply);
      return;
    }
    if (change?.resync) this.#accepted = undefined; // even what it accepted before: a queryd with other rules
    const err = new RejectedError(reply.error || 'rejected without a reason', { op: msg.op, change: msg.state, reply });
    for (const w of waiters) w.reject(err);
    if (change) this.emit('rejected', err);
  }
}

/** A merge patch that sets one player's fields, or removes the player (null). */
const player = (id, fields) => ({ players: { [id]: fields } });

async function main() {
  const socketPath = process.argv[2] || process.env.QUERYD_FEED_SOCKET || defaultSocket();
  const feed = await Feed.connect(socketPath);
  const steps = [
    ['replace', () => feed.replace({
      name: 'Node.js feeder example', map: 'example_map', game: 'Example Game', max_players: 16,
      players: { 1: { name: 'Alice', score: 3, ping: 20 } },
      rules: { mp_timelimit: '30' },
    })],
    ['Bob joined', () => feed.patch(player(2, { name: 'Bob', ping: 35 }))],
    ['Carol joined', () => feed.patch(player(3, { name: 'Carol', ping: 50 }))],
    ['Bob scored', () => feed.patch(player(2, { score: 10 }))],
    ['Carol left', () => feed.patch(player(3, null))],
    ['ping', () => feed.ping()],
  ];
  for (const [what, send] of steps) {
    await send();
    console.log(`${what}: ok`);
  }

  // A rejected message changes nothing; the connection stays usable.
  try {
    await feed.patch({ max_players: -1 });
    throw new Error('queryd accepted max_players -1');
  } catch (err) {
    if (!(err instanceof RejectedError)) throw err;
    console.log(`rejected as expected: ${err.message}`);
  }

  const { state } = await feed.get();
  const list = Object.keys(state.players || {})
    .sort((a, b) => Number(a) - Number(b))
    .map((id) => `${state.players[id].name} ${state.players[id].score}`);
  console.log(`players: ${list.join(', ')}`);
  feed.close();
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err) => {
    console.error(`feeder: ${err.message}`);
    process.exit(1);
  });
}
