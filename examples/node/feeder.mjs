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
// server: call replace() on start, patch() on every change, and ping() every
// few seconds so that queryd does not go silent ([feed] stale_after).
import net from 'node:net';
import path from 'node:path';

/** The socket path of [feed] socket = "", found as `queryd push` finds it. */
export function defaultSocket() {
  const runtimeDir = process.env.XDG_RUNTIME_DIR;
  if (runtimeDir) return path.join(runtimeDir, 'queryd', 'feed.sock');
  return path.join(process.env.TMPDIR || '/tmp', `queryd-${process.getuid()}`, 'feed.sock');
}

/** A rejected message: queryd replied {"ok":false,"error":...}; nothing changed. */
export class RejectedError extends Error {}

/**
 * One feed connection. Messages are NDJSON lines; queryd answers every line
 * with one reply line, in order, so replies are matched to a FIFO of waiters.
 */
export class Feed {
  static connect(socketPath) {
    return new Promise((resolve, reject) => {
      const sock = net.createConnection({ path: socketPath });
      const failed = (err) => reject(new Error(`cannot connect to the feed socket ${socketPath}: ${err.code || err.message}`
        + ' (is queryd running? give its [feed] socket as SOCKET or in QUERYD_FEED_SOCKET)'));
      sock.once('connect', () => { sock.off('error', failed); resolve(new Feed(sock)); });
      sock.once('error', failed);
    });
  }

  constructor(sock) {
    this.sock = sock;
    this.waiting = [];
    this.buf = '';
    sock.setEncoding('utf8');
    sock.on('data', (chunk) => this.#onData(chunk));
    const fail = (err) => {
      for (const w of this.waiting.splice(0)) w.reject(err);
    };
    sock.on('error', fail);
    sock.on('close', () => fail(new Error('queryd closed the feed connection')));
  }

  #onData(chunk) {
    this.buf += chunk;
    let nl;
    while ((nl = this.buf.indexOf('\n')) >= 0) {
      const line = this.buf.slice(0, nl);
      this.buf = this.buf.slice(nl + 1);
      const w = this.waiting.shift();
      if (!w) continue;
      let reply;
      try {
        reply = JSON.parse(line);
      } catch (err) {
        w.reject(new Error(`bad reply line ${JSON.stringify(line)}: ${err.message}`));
        continue;
      }
      if (reply.ok) w.resolve(reply);
      else w.reject(new RejectedError(reply.error || 'rejected without a reason'));
    }
  }

  /** Sends one message object and resolves with its reply ({ok, version, ...}). */
  send(msg) {
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      this.sock.write(JSON.stringify(msg) + '\n');
    });
  }

  replace(state) { return this.send({ op: 'replace', state }); }
  patch(state) { return this.send({ op: 'patch', state }); }
  ping() { return this.send({ op: 'ping' }); }
  get() { return this.send({ op: 'get' }); }
  close() { this.sock.end(); }
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

main().catch((err) => {
  console.error(`feeder: ${err.message}`);
  process.exit(1);
});
