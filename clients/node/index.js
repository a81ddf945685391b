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

import dgram from "node:dgram";
import { lookup } from "node:dns/promises";
import { createHash } from "node:crypto";

const VERSION = 1;
const KIND_CHALLENGE = 0;
const KIND_INFO = 1;
const KIND_LOGO = 2;
const INFO_HEADER = 20;
const LOGO_HEADER = 48;
const LOGO_PIECE = 1024;
const LOGO_WINDOW = 16;
const MAX_JSON = 16 << 20;
const RETRY_MS = 250;

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
  if (m.length < 8 || m.toString("latin1", 0, 4) !== "SAGR" || m[4] !== VERSION) return -1;
  return m[5];
}

/**
 * Asks a SAGL server for its query JSON (and with `logo: true` its logo).
 * Resolves to { info, ping, logo }: info is the JSON, ping the round trip in
 * ms, logo the logo's bytes checked against its SHA-256 (null when the server
 * has none or it was not asked for). Rejects if the server does not answer
 * within `timeout` ms (for the info, and again for the logo).
 */
export async function queryServer(host, port = 7777, { timeout = 1500, logo = false } = {}) {
  const { address, family } = await lookup(host);
  const sock = dgram.createSocket(family === 6 ? "udp6" : "udp4");
  const s = new Session(sock, address, port);
  try {
    await new Promise((resolve, reject) => {
      sock.once("error", reject);
      sock.bind(0, resolve);
    });
    const { info, ping } = await s.info(timeout);
    let bytes = null;
    if (logo && info?.branding?.logo) bytes = await s.logo(timeout);
    return { info, ping, logo: bytes };
  } finally {
    sock.close();
  }
}

/** One client socket talking to one server: the token and the reply routing. */
class Session {
  constructor(sock, address, port) {
    this.sock = sock;
    this.address = address;
    this.port = port;
    this.token = 0;
    this.onReply = null;
    this.onChallenge = null;
    this.fail = null;
    sock.on("message", (m) => this.message(m));
    sock.on("error", (err) => this.fail?.(err));
  }

  send(kind, offset = 0) {
    this.sock.send(encodeRequest(kind, this.token, offset), this.port, this.address);
  }

  message(m) {
    const kind = replyKind(m);
    if (kind === KIND_CHALLENGE && m.length === 12) {
      this.token = m.readUInt32LE(8);
      this.onChallenge?.();
    } else if (kind > 0) {
      this.onReply?.(kind, m);
    }
  }

  /** Runs one exchange: ask() now and every RETRY_MS, until settle() or timeout. */
  exchange(timeout, what, ask, onReply) {
    return new Promise((resolve, reject) => {
      const end = (err, v) => {
        clearInterval(retry);
        clearTimeout(giveUp);
        this.onReply = this.onChallenge = this.fail = null;
        err ? reject(err) : resolve(v);
      };
      const retry = setInterval(ask, Math.min(RETRY_MS, timeout));
      const giveUp = setTimeout(
        () => end(new Error(`sagl: no ${what} from ${this.address}:${this.port} within ${timeout} ms`)),
        timeout,
      );
      this.fail = (err) => end(err);
      this.onChallenge = ask;
      this.onReply = (kind, m) => {
        try {
          onReply(kind, m, end);
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
    return this.exchange(timeout, "answer", ask, (kind, m, end) => {
      if (kind !== KIND_INFO || m.length < INFO_HEADER) return;
      const serial = m.readUInt32LE(8);
      const total = m.readUInt32LE(12);
      const part = m.readUInt16LE(16);
      const parts = m.readUInt16LE(18);
      if (parts === 0 || part >= parts || total > MAX_JSON) return;
      if (!asm || asm.serial !== serial || asm.total !== total || asm.parts.length !== parts) {
        asm = { serial, total, parts: new Array(parts).fill(null), got: 0, size: 0 };
      }
      if (ping === null) ping = performance.now() - sentAt;
      if (asm.parts[part] !== null) return;
      asm.parts[part] = Buffer.from(m.subarray(INFO_HEADER));
      asm.got++;
      asm.size += asm.parts[part].length;
      if (asm.got === parts && asm.size === total) {
        end(null, { info: JSON.parse(Buffer.concat(asm.parts).toString("utf8")), ping });
      }
    });
  }

  /** Fetches the logo piece by piece (a sliding window) and checks its hash. */
  logo(timeout) {
    let f = null;
    let next = 0; // the next piece not asked for yet
    const ask = () => {
      if (!f) return this.send(KIND_LOGO, 0);
      let n = 0;
      for (let i = 0; i < f.pieces.length && n < LOGO_WINDOW; i++) {
        if (f.pieces[i] === null) {
          this.send(KIND_LOGO, i * LOGO_PIECE);
          next = Math.max(next, i + 1);
          n++;
        }
      }
    };
    return this.exchange(timeout, "logo", ask, (kind, m, end) => {
      if (kind !== KIND_LOGO || m.length < LOGO_HEADER) return;
      const size = m.readUInt32LE(8);
      const offset = m.readUInt32LE(12);
      const sum = m.toString("hex", 16, 48);
      if (size === 0) return end(null, null);
      let fresh = false;
      if (!f || f.size !== size || f.sum !== sum) {
        f = { size, sum, pieces: new Array(Math.ceil(size / LOGO_PIECE)).fill(null), got: 0 };
        next = 0;
        fresh = true;
      }
      const data = m.subarray(LOGO_HEADER);
      if (offset % LOGO_PIECE !== 0 || offset >= size || data.length !== Math.min(LOGO_PIECE, size - offset)) return;
      const i = offset / LOGO_PIECE;
      if (f.pieces[i] !== null) return;
      f.pieces[i] = Buffer.from(data);
      f.got++;
      if (f.got === f.pieces.length) {
        const bytes = Buffer.concat(f.pieces);
        if (createHash("sha256").update(bytes).digest("hex") !== f.sum) {
          return end(new Error(`sagl: the logo does not match its SHA-256 ${f.sum}`));
        }
        return end(null, bytes);
      }
      if (fresh) return ask(); // the size is known now: ask for a window
      while (next < f.pieces.length && f.pieces[next] !== null) next++;
      if (next < f.pieces.length) this.send(KIND_LOGO, next++ * LOGO_PIECE); // one in, one out
    });
  }
}
