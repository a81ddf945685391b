// Test kit: SAGL replies built by hand and scripted UDP servers on loopback,
// for the tests in ../test (it lives outside test/ so `node --test` does not
// run it as a test file).
import dgram from "node:dgram";
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const PART = 1180;
const here = path.dirname(fileURLToPath(import.meta.url));

function header(kind, size) {
  const h = Buffer.alloc(size);
  h.write("SAGR", 0, "latin1");
  h[4] = 1;
  h[5] = kind;
  return h;
}

/** A 12-byte challenge carrying token. */
export function challenge(token) {
  const c = header(0, 12);
  c.writeUInt32LE(token >>> 0, 8);
  return c;
}

/** One info part with whatever header fields the test wants. */
export function infoPart({ serial, total, part, parts, body }) {
  const h = header(1, 20);
  h.writeUInt32LE(serial >>> 0, 8);
  h.writeUInt32LE(total >>> 0, 12);
  h.writeUInt16LE(part, 16);
  h.writeUInt16LE(parts, 18);
  return Buffer.concat([h, body]);
}

/** The info parts of json (a string or Buffer) as queryd splits it. */
export function partsOf(json, serial) {
  const body = Buffer.from(json);
  const parts = Math.max(1, Math.ceil(body.length / PART));
  return Array.from({ length: parts }, (_, part) =>
    infoPart({ serial, total: body.length, part, parts, body: body.subarray(part * PART, (part + 1) * PART) }),
  );
}

/** One logo piece: size, offset, a 32-byte sum and the data. */
export function logoPiece({ size, offset, sum, data }) {
  const h = header(2, 48);
  h.writeUInt32LE(size >>> 0, 8);
  h.writeUInt32LE(offset >>> 0, 12);
  sum.copy(h, 16);
  return Buffer.concat([h, data]);
}

/** A small query JSON named name (with a logo reference when logo is given). */
export function doc(name, { players = 100, logo = null } = {}) {
  const list = Array.from({ length: players }, (_, id) => ({ id, name: `P${id}`, score: 0, ping: 0 }));
  return JSON.stringify({
    query: 1, name, version: "", protocol: 0, players: { online: players, max: players, list },
    branding: { logo, primary: null, secondary: null, showName: true },
  });
}

/** Parses a 64-byte request: { kind, token, offset }, or null. */
export function request(m) {
  if (m.length !== 64 || m.toString("latin1", 0, 4) !== "SAGQ") return null;
  return { kind: m[5], token: m.readUInt32LE(8), offset: m.readUInt32LE(12) };
}

/**
 * A UDP server on address (port 0) calling handle(m, rinfo, send), where
 * send(buf) replies to rinfo. Resolves to { sock, port, close }.
 */
export async function server(address, handle) {
  const sock = dgram.createSocket("udp4");
  sock.on("message", (m, rinfo) => handle(m, rinfo, (b) => sock.send(b, rinfo.port, rinfo.address)));
  await new Promise((resolve, reject) => {
    sock.once("error", reject);
    sock.bind(0, address, resolve);
  });
  return { sock, port: sock.address().port, close: () => sock.close() };
}

/**
 * Sends make(i) for i = 0.. to port on address from sock, at most count
 * datagrams and for at most ms: at most batch sends in flight, a batch per
 * event-loop turn (a Node receiver in this process reads 32 datagrams a
 * turn), or with pause a batch every pause ms (for a receiver in another
 * process, which may read slower). Resolves to the number sent.
 */
export function flood(sock, port, count, ms, make, { address = "127.0.0.1", batch = 16, pause = 0 } = {}) {
  return new Promise((resolve) => {
    const stop = performance.now() + ms;
    let i = 0;
    let inFlight = 0;
    let closed = false;
    const done = () => {
      if (inFlight === 0 && (i >= count || performance.now() > stop || closed)) resolve(i);
    };
    const turn = () => {
      while (inFlight < batch && i < count && performance.now() <= stop) {
        inFlight++;
        try {
          sock.send(make(i++), port, address, () => {
            inFlight--;
            done();
          });
        } catch {
          closed = true; // the socket closed under us
          inFlight--;
          break;
        }
      }
      if (i < count && performance.now() <= stop && !closed) pause ? setTimeout(turn, pause) : setImmediate(turn);
      else done();
    };
    turn();
  });
}

/**
 * Runs queryServer(host, port, options) in a child process and resolves to
 * what it printed: { ok, code, message, ms, maxRSS (bytes), name, logo }. The
 * child is killed after killMs.
 */
export function runChild(port, options, killMs = 20000) {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [path.join(here, "child.js"), String(port), JSON.stringify(options)], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    const timer = setTimeout(() => p.kill("SIGKILL"), killMs);
    p.stdout.on("data", (d) => (out += d));
    p.on("error", reject);
    p.on("exit", (code, signal) => {
      clearTimeout(timer);
      try {
        resolve(JSON.parse(out));
      } catch {
        reject(new Error(`the child printed ${JSON.stringify(out)} and exited with ${code ?? signal}`));
      }
    });
  });
}
