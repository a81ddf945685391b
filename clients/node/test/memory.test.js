// What a hostile server can make the client hold: each case runs
// queryServer in a child process (testkit/child.js) against a scripted
// server here on loopback, and bounds the child's peak RSS (an idle Node 20
// is ~45 MiB) and how long the call took. Every server sends a bounded number
// of datagrams within a bounded time.
import { test } from "node:test";
import assert from "node:assert/strict";

import { limits } from "../index.js";
import { challenge, doc, flood, infoPart, logoPiece, partsOf, request, runChild, server } from "../testkit/sagl.js";

const TOKEN = 0x0a0b0c0d;
const MiB = 1 << 20;

/**
 * A server that challenges token-less requests and calls info(rinfo) /
 * logo(req, rinfo) for the others, one at a time (what comes in while one
 * runs is dropped), at most `rounds` times each.
 */
async function hostile({ info, logo = () => {}, rounds = 4 }) {
  let busy = false;
  const count = { 1: 0, 2: 0 };
  const s = await server("127.0.0.1", async (m, rinfo, send) => {
    const req = request(m);
    if (!req) return;
    if (req.token !== TOKEN) return send(challenge(TOKEN));
    if (busy || (req.kind !== 1 && req.kind !== 2) || ++count[req.kind] > rounds) return;
    busy = true;
    try {
      await (req.kind === 1 ? info(rinfo, send) : logo(req, rinfo, send));
    } finally {
      busy = false;
    }
  });
  /** Sends list to rinfo, 32 datagrams a millisecond (at most 5 s). */
  s.sendAll = (list, rinfo) =>
    flood(s.sock, rinfo.port, list.length, 5000, (i) => list[i], { address: rinfo.address, batch: 32, pause: 1 });
  return s;
}

/** Runs the client in a child, reports what it saw and checks code, time and peak RSS. */
async function check(t, s, { timeout, logo = false, code, rssMiB, within = timeout }) {
  try {
    const r = await runChild(s.port, { timeout, logo });
    const rss = r.maxRSS / MiB;
    t.diagnostic(`${r.ok ? "resolved" : r.code} in ${r.ms} ms, peak RSS ${rss.toFixed(0)} MiB: ${r.message ?? r.name}`);
    assert.equal(r.code, code, `${r.code}: ${r.message}`);
    assert.ok(r.ms <= within + 300, `took ${r.ms} ms, allowed ${within} ms`);
    assert.ok(rss < rssMiB, `peak RSS ${rss.toFixed(0)} MiB, bound ${rssMiB} MiB`);
    return r;
  } finally {
    s.close();
  }
}

test("1,200-byte parts past the maxJSON total, then ~64 KB parts: dropped, SAGL_TIMEOUT, peak RSS < 150 MiB", async (t) => {
  // Parts of one serial claiming 65,535 parts and maxJSON bytes: 16,000 of
  // 1,200 bytes (past the total after 3,555), then 64 KB ones, 32 a millisecond,
  // at most 40,000 in 1.4 s; none completes the JSON.
  const big = Buffer.alloc(64000, 0x5b);
  const small = Buffer.alloc(1180, 0x5b);
  const part = (i) =>
    infoPart({ serial: 1, total: limits.maxJSON, part: i + 1, parts: 65535, body: i < 16000 ? small : big });
  const s = await hostile({
    info: (rinfo) => flood(s.sock, rinfo.port, 40000, 1400, part, { address: rinfo.address, batch: 32, pause: 1 }),
    rounds: 1,
  });
  await check(t, s, { timeout: 1500, code: "SAGL_TIMEOUT", rssMiB: 150 });
});

test("maxJSON bytes of [ and ]: refused by the depth scan, SAGL_BAD_ANSWER, peak RSS < 160 MiB", async (t) => {
  const half = limits.maxJSON / 2;
  const parts = partsOf(Buffer.concat([Buffer.alloc(half, "["), Buffer.alloc(half, "]")]), 1);
  const s = await hostile({ info: (rinfo) => s.sendAll(parts, rinfo) });
  await check(t, s, { timeout: 10000, code: "SAGL_BAD_ANSWER", rssMiB: 160 });
});

test("the largest JSON under the caps (maxJSONItems - 3 keys, maxJSON bytes): resolves, peak RSS < 250 MiB", async (t) => {
  const n = limits.maxJSONItems - 3;
  const w = Math.floor(limits.maxJSON / limits.maxJSONItems) - 5;
  const fields = Array.from({ length: n }, (_, i) => `"${String(i).padStart(w, "k")}":0`).join(",");
  const parts = partsOf(`{"name":"big","values":{${fields}}}`, 1);
  const s = await hostile({ info: (rinfo) => s.sendAll(parts, rinfo) });
  await check(t, s, { timeout: 10000, code: null, rssMiB: 250 });
});

test("a 4 GB logo whose hash changes with every piece: SAGL_BAD_ANSWER at once, peak RSS < 80 MiB", async (t) => {
  const json = doc("logo", { logo: { sha256: "00".repeat(32), size: 4096 } });
  const data = Buffer.alloc(1024);
  const piece = (i) => {
    const sum = Buffer.alloc(32);
    sum.writeUInt32LE(i);
    return logoPiece({ size: 0xffffffff, offset: i * 1024, sum, data });
  };
  const s = await hostile({
    info: (rinfo, send) => partsOf(json, 1).forEach(send),
    logo: (req, rinfo) => flood(s.sock, rinfo.port, 20000, 1400, piece, { address: rinfo.address }),
    rounds: 1,
  });
  await check(t, s, { timeout: 1500, logo: true, code: "SAGL_BAD_ANSWER", rssMiB: 80, within: 500 });
});

test("a 16 MiB logo (the cap) with a wrong hash: SAGL_BAD_LOGO, peak RSS < 160 MiB", async (t) => {
  const json = doc("logo", { logo: { sha256: "00".repeat(32), size: limits.maxLogo } });
  const data = Buffer.alloc(1024, 0x89);
  const sum = Buffer.alloc(32, 0xee);
  let pieces = 0;
  const s = await hostile({
    info: (rinfo, send) => partsOf(json, 1).forEach(send),
    // Each request for a piece gets it (at most 3 × 16,384 pieces).
    logo: (req, rinfo, send) => {
      if (++pieces <= 3 * 16384) send(logoPiece({ size: limits.maxLogo, offset: req.offset, sum, data }));
    },
    rounds: Infinity,
  });
  await check(t, s, { timeout: 10000, logo: true, code: "SAGL_BAD_LOGO", rssMiB: 160 });
});
