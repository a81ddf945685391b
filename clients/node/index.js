// SPDX-License-Identifier: MIT
// @sagl/query: ask a SAGL server about itself over UDP.
//
//   import { queryServer } from "@sagl/query";
//   const { info, ping, logo } = await queryServer("play.example.com", 7777, { logo: true });
//
// The format: 64-byte requests "SAGQ" u8 version 1, u8 kind (1 info, 2 logo),
// u16 0, u32 token, u32 logo offset; replies "SAGR" u8 1, u8 kind, u16 0, then
// kind 0: u32 token; kind 1: u32 serial, u32 total, u16 part, u16 parts, bytes;
// kind 2: u32 size, u32 offset, 32-byte SHA-256, up to 1024 bytes.
// Integers are little-endian. No dependencies.
//
// The server is not trusted: the socket is connected to the address asked
// (datagrams from anywhere else are ignored), replies over 1,200 bytes are
// dropped, and what the client keeps is capped (see the constants below and
// "What the client refuses" in README.md).

import dgram from "node:dgram";
import { lookup } from "node:dns/promises";
import { createHash } from "node:crypto";

const VERSION = 1;
const KIND_CHALLENGE = 0;
const KIND_INFO = 1;
const KIND_LOGO = 2;
const CHALLENGE_SIZE = 12;
const MAX_DATAGRAM = 1200; // the largest reply the protocol has
const INFO_HEADER = 20;
const PART_SIZE = MAX_DATAGRAM - INFO_HEADER; // JSON bytes in one info part
const LOGO_HEADER = 48;
const LOGO_PIECE = 1024;
const LOGO_WINDOW = 16;
const RETRY_MS = 250;

/** The caps on what a server can make the client hold or parse. */
export const limits = Object.freeze({
  /** The JSON's total length (the Go client's sagl.MaxJSON; queryd sends at most ~1.9 MiB). */
  maxJSON: 4 << 20,
  /** Nesting of arrays and objects in the JSON (a real one has 4). */
  maxJSONDepth: 64,
  /** `{`, `[` and `,` outside strings: about the number of values (a real one has at most ~25,000; the Go client's sagl.MaxItems). */
  maxJSONItems: 1 << 17,
  /** The logo's size (queryd serves at most 16 MiB: sagl.max_logo). */
  maxLogo: 16 << 20,
  /** The challenge with a new token that fails a call (the 3rd: two are answered), as A2S stops after 3 rounds. */
  challengeRounds: 3,
});

/**
 * A failed query. `code` says why: SAGL_TIMEOUT (no complete answer in time),
 * SAGL_ONLY_CHALLENGES (the server answers only with challenges),
 * SAGL_BAD_ANSWER (the JSON or a size is invalid or over a cap),
 * SAGL_BAD_LOGO (the logo does not match its SHA-256). Socket and DNS errors
 * are passed on as Node gives them (e.g. ECONNREFUSED, ENOTFOUND).
 */
export class SaglError extends Error {
  constructor(code, message, options) {
    super(message, options);
    this.name = "SaglError";
    this.code = code;
  }
}

/** Builds one 64-byte request. */
export function encodeRequest(kind, token = 0, offset = 0) {
  const b = Buffer.alloc(64);
  b.write("SAGQ", 0, "latin1");
  b[4] = VERSION;
  b[5] = kind;
  b.writeUInt32LE(token >>> 0, 8);
  b.writeUInt32LE(offset >>> 0, 12);
  return b;
}

/** The reply's kind, or -1 when it is not a SAGL reply. */
function replyKind(m) {
  if (m.length < 8 || m.length > MAX_DATAGRAM || m.toString("latin1", 0, 4) !== "SAGR" || m[4] !== VERSION) return -1;
  return m[5];
}

/**
 * Asks a SAGL server for its query JSON (and with `logo: true` its logo).
 * Resolves to { info, ping, logo }: info is the JSON (an object), ping the
 * round trip in ms, logo the logo's bytes checked against its SHA-256 (null
 * when the server has none or it was not asked for). Rejects with a SaglError
 * if the server does not answer within `timeout` ms (for the info, and again
 * for the logo) or answers with something the client refuses.
 */
export async function queryServer(host, port = 7777, { timeout = 1500, logo = false } = {}) {
  if (!(timeout > 0 && timeout <= 2 ** 31 - 1)) throw new RangeError(`sagl: timeout ${timeout} is not 1 to 2^31-1 ms`);
  const { address, family } = await lookup(host);
  const sock = dgram.createSocket(family === 6 ? "udp6" : "udp4");
  try {
    await new Promise((resolve, reject) => {
      sock.once("error", reject);
      sock.connect(port, address, () => {
        sock.off("error", reject);
        resolve();
      });
    });
    const s = new Session(sock, sock.remoteAddress());
    const { info, ping } = await s.info(timeout);
    let bytes = null;
    if (logo && info.branding?.logo) bytes = await s.logo(timeout);
    return { info, ping, logo: bytes };
  } finally {
    sock.close();
  }
}

/** One connected client socket: the token and the reply routing. */
class Session {
  constructor(sock, remote) {
    this.sock = sock;
    this.address = remote.address;
    this.port = remote.port;
    this.token = 0;
    this.onReply = null;
    this.onChallenge = null;
    this.fail = null;
    sock.on("message", (m, rinfo) => this.message(m, rinfo));
    sock.on("error", (err) => this.fail?.(err));
  }

  send(kind, offset = 0) {
    this.sock.send(encodeRequest(kind, this.token, offset));
  }

  message(m, rinfo) {
    // The socket is connected; this also drops what was queued before connect().
    if (rinfo.address !== this.address || rinfo.port !== this.port) return;
    const kind = replyKind(m);
    if (kind === KIND_CHALLENGE && m.length === CHALLENGE_SIZE) {
      this.onChallenge?.(m.readUInt32LE(8));
    } else if (kind > 0) {
      this.onReply?.(kind, m);
    }
  }

  /**
   * Runs one exchange: ask() now and every RETRY_MS until settled or the
   * deadline. onReply(kind, m, settle) reports whether m was usable;
   * settle(compute) ends the exchange with what compute returns or throws,
   * checking the deadline before and after (a long parse is a timeout).
   */
  exchange(timeout, what, ask, onReply) {
    return new Promise((resolve, reject) => {
      const deadline = performance.now() + timeout;
      const from = `${this.address}:${this.port}`;
      let rounds = 0; // challenges with a new token
      let challenges = 0; // every challenge
      let answered = false; // a usable reply arrived
      const end = (err, v) => {
        clearInterval(retry);
        clearTimeout(giveUp);
        this.onReply = this.onChallenge = this.fail = null;
        err ? reject(err) : resolve(v);
      };
      const timedOut = () =>
        challenges > 0 && !answered
          ? new SaglError("SAGL_ONLY_CHALLENGES", `sagl: ${from} answers only with challenges (${challenges} in ${timeout} ms)`)
          : new SaglError("SAGL_TIMEOUT", `sagl: no ${what} from ${from} within ${timeout} ms`);
      const late = () => performance.now() > deadline;
      const settle = (compute) => {
        answered = true;
        if (late()) return end(timedOut());
        let v;
        try {
          v = compute();
        } catch (err) {
          return end(err);
        }
        end(late() ? timedOut() : null, v);
      };
      const retry = setInterval(ask, Math.min(RETRY_MS, timeout));
      const giveUp = setTimeout(() => end(timedOut()), timeout);
      this.fail = (err) => end(err);
      this.onChallenge = (token) => {
        challenges++;
        if (token === this.token) return; // an answer to an older request: already asked with it
        if (++rounds >= limits.challengeRounds) {
          return end(new SaglError("SAGL_ONLY_CHALLENGES", `sagl: ${from} answers only with challenges (${rounds} new tokens)`));
        }
        this.token = token;
        ask();
      };
      this.onReply = (kind, m) => {
        try {
          if (onReply(kind, m, settle)) answered = true;
        } catch (err) {
          end(err);
        }
      };
      ask();
    });
  }

  /** Asks for the JSON and puts its parts together; a new serial starts again. */
  info(timeout) {
    let asm = null;
    let sentAt = 0;
    let ping = null;
    const ask = () => {
      sentAt = performance.now();
      this.send(KIND_INFO);
    };
    return this.exchange(timeout, "answer", ask, (kind, m, settle) => {
      if (kind !== KIND_INFO || m.length < INFO_HEADER) return false;
      const serial = m.readUInt32LE(8);
      const total = m.readUInt32LE(12);
      const part = m.readUInt16LE(16);
      const parts = m.readUInt16LE(18);
      const size = m.length - INFO_HEADER;
      if (total > limits.maxJSON) {
        throw new SaglError("SAGL_BAD_ANSWER", `sagl: the server's JSON is ${total} bytes, over the ${limits.maxJSON}-byte cap`);
      }
      if (parts === 0 || part >= parts || total > parts * PART_SIZE || size > total) return false;
      if (!asm || asm.serial !== serial || asm.total !== total || asm.count !== parts) {
        asm = { serial, total, count: parts, parts: new Map(), size: 0 };
      }
      if (asm.parts.has(part)) return true;
      if (asm.size + size > total) return false; // would pass the total
      if (ping === null) ping = performance.now() - sentAt;
      asm.parts.set(part, Buffer.from(m.subarray(INFO_HEADER)));
      asm.size += size;
      if (asm.parts.size === parts && asm.size === total) {
        const { parts: got } = asm;
        asm = null;
        settle(() => ({ info: decodeInfo(Buffer.concat(Array.from({ length: parts }, (_, i) => got.get(i)), total)), ping }));
      }
      return true;
    });
  }

  /** Fetches the logo piece by piece (a sliding window) and checks its hash. */
  logo(timeout) {
    let f = null;
    let next = 0; // the next piece not asked for yet
    const ask = () => {
      if (!f) return this.send(KIND_LOGO, 0);
      let n = 0;
      for (let i = 0; i < f.count && n < LOGO_WINDOW; i++) {
        if (!f.pieces.has(i)) {
          this.send(KIND_LOGO, i * LOGO_PIECE);
          next = Math.max(next, i + 1);
          n++;
        }
      }
    };
    return this.exchange(timeout, "logo", ask, (kind, m, settle) => {
      if (kind !== KIND_LOGO || m.length < LOGO_HEADER) return false;
      const size = m.readUInt32LE(8);
      const offset = m.readUInt32LE(12);
      const sum = m.toString("hex", 16, 48);
      if (size === 0) {
        settle(() => null);
        return true;
      }
      if (size > limits.maxLogo) {
        throw new SaglError("SAGL_BAD_ANSWER", `sagl: the server's logo is ${size} bytes, over the ${limits.maxLogo}-byte cap`);
      }
      const data = m.subarray(LOGO_HEADER);
      if (offset % LOGO_PIECE !== 0 || offset >= size || data.length !== Math.min(LOGO_PIECE, size - offset)) return false;
      let fresh = false;
      if (!f || f.size !== size || f.sum !== sum) {
        f = { size, sum, count: Math.ceil(size / LOGO_PIECE), pieces: new Map() };
        next = 0;
        fresh = true;
      }
      const i = offset / LOGO_PIECE;
      if (f.pieces.has(i)) return true;
      f.pieces.set(i, Buffer.from(data));
      if (f.pieces.size === f.count) {
        const { pieces, count, sum: want } = f;
        f = null;
        settle(() => {
          const bytes = Buffer.concat(Array.from({ length: count }, (_, j) => pieces.get(j)), size);
          if (createHash("sha256").update(bytes).digest("hex") !== want) {
            throw new SaglError("SAGL_BAD_LOGO", `sagl: the logo does not match its SHA-256 ${want}`);
          }
          return bytes;
        });
        return true;
      }
      if (fresh) ask(); // the size is known now: ask for a window
      else {
        while (next < f.count && f.pieces.has(next)) next++;
        if (next < f.count) this.send(KIND_LOGO, next++ * LOGO_PIECE); // one in, one out
      }
      return true;
    });
  }
}

/**
 * Parses the reassembled JSON after a scan that skips strings and bounds its
 * nesting and size: V8 parses 16 MiB of "[" into 8 million nested arrays
 * (~1 GB) that JSON.stringify cannot print. The top must be an object.
 */
function decodeInfo(js) {
  let depth = 0;
  let items = 0;
  for (let i = 0; i < js.length; i++) {
    const c = js[i];
    if (c === 0x22) {
      // a string: skip to its closing quote (past escapes)
      for (i++; i < js.length && js[i] !== 0x22; i++) if (js[i] === 0x5c) i++;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > limits.maxJSONDepth) throw badJSON(`nests deeper than ${limits.maxJSONDepth}`);
      if (++items > limits.maxJSONItems) throw badJSON(`has more than ${limits.maxJSONItems} items`);
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    } else if (c === 0x2c && ++items > limits.maxJSONItems) {
      throw badJSON(`has more than ${limits.maxJSONItems} items`);
    }
  }
  let v;
  try {
    v = JSON.parse(js.toString("utf8"));
  } catch (err) {
    throw badJSON(`is not JSON (${err.message})`, err);
  }
  if (v === null || typeof v !== "object" || Array.isArray(v)) throw badJSON("is not a JSON object");
  return v;
}

function badJSON(what, cause) {
  return new SaglError("SAGL_BAD_ANSWER", `sagl: the server's answer ${what}`, cause && { cause });
}
