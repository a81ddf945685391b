// The client against hostile servers on loopback: malformed info parts,
// forged replies and challenges from another address (127.0.0.2), servers
// that only challenge, JSON the client refuses, a parse that ends after the
// deadline, a logo over the cap. Every server answers a bounded number of
// requests; the memory-heavy cases are in memory.test.js.
import { test } from "node:test";
import assert from "node:assert/strict";

import { queryServer, limits } from "../index.js";
import { challenge, doc, flood, infoPart, logoPiece, partsOf, request, server, PART } from "../testkit/sagl.js";

const TOKEN = 0x01020304;

/**
 * A server that challenges token-less requests and answers the others with
 * answer(req, send, rinfo); it answers at most maxRequests requests.
 */
async function scripted(answer, { address = "127.0.0.1", maxRequests = 10000 } = {}) {
  const stats = { requests: 0, challenged: 0 };
  const s = await server(address, (m, rinfo, send) => {
    const req = request(m);
    if (!req || ++stats.requests > maxRequests) return;
    if (req.token !== TOKEN) {
      stats.challenged++;
      return send(challenge(TOKEN));
    }
    answer(req, send, rinfo);
  });
  // Sends many datagrams paced (the client shares this process's event loop).
  stats.sendAll = (list, rinfo) => flood(s.sock, rinfo.port, list.length, 2000, (i) => list[i], { address: rinfo.address });
  return Object.assign(s, { stats });
}

async function rejectsWith(promise, code) {
  const err = await promise.then(
    (v) => assert.fail(`resolved with ${JSON.stringify(v?.info?.name ?? v).slice(0, 100)}`),
    (e) => e,
  );
  assert.equal(err.code, code, `${err.name}: ${err.message}`);
  return err;
}

test("info parts over 1,200 bytes, past the total or over parts × 1,180 bytes are dropped", async (t) => {
  const real = doc("real", { players: 60 });
  const good = partsOf(real, 5);
  const n = good.length;
  const total = Buffer.byteLength(real);
  assert.ok(n >= 3 && total % PART > 0 && total % PART < 1000, `${n} parts, last ${total % PART} bytes`);
  const filler = (len) => Buffer.alloc(len, 0x20);
  // Each bogus part is wrong in one way only and, if taken, spoils the
  // assembly so that the real answer never completes: one of another serial
  // sent after each real part resets it every time; one of the same serial
  // taken for the last part makes the lengths never add up.
  const each = (part) => good.flatMap((g) => [g, part]);
  const beforeLast = (part) => [...good.slice(0, n - 1), part, good[n - 1]];
  const cases = {
    "a datagram over 1,200 bytes": each(infoPart({ serial: 6, total: 2 * PART, part: 0, parts: 2, body: filler(1280) })),
    "a part that would pass the total": beforeLast(infoPart({ serial: 5, total, part: n - 1, parts: n, body: filler(PART) })),
    "a total over parts × 1,180": each(infoPart({ serial: 6, total: 5000, part: 0, parts: 1, body: filler(PART) })),
  };
  for (const [what, sequence] of Object.entries(cases)) {
    await t.test(what, async () => {
      const s = await scripted((req, send) => sequence.forEach(send));
      try {
        const { info } = await queryServer("127.0.0.1", s.port, { timeout: 1000 });
        assert.equal(info.name, "real");
        assert.equal(info.players.list.length, 60);
      } finally {
        s.close();
      }
    });
  }
});

test("a forged answer from another address is ignored", async () => {
  const forger = await server("127.0.0.2", () => {});
  const forged = partsOf(doc("forged"), 9);
  const s = await scripted((req, send, rinfo) => {
    // The forged answer reaches the client's port before the real one.
    let left = forged.length;
    for (const p of forged) {
      forger.sock.send(p, rinfo.port, "127.0.0.1", () => {
        if (--left === 0) partsOf(doc("real"), 5).forEach(send);
      });
    }
  });
  try {
    const { info } = await queryServer("127.0.0.1", s.port, { timeout: 1000 });
    assert.equal(info.name, "real");
  } finally {
    s.close();
    forger.close();
  }
});

test("a storm of forged challenges from another address makes the client send nothing", async (t) => {
  const forger = await server("127.0.0.2", () => {});
  let forgedSent = 0;
  const stats = { requests: 0, tokenless: 0 };
  let storm = null;
  const real = await server("127.0.0.1", async (m, rinfo, send) => {
    const req = request(m);
    if (!req || ++stats.requests > 10000) return;
    // The first request sets off 2,000 challenges with new tokens from
    // 127.0.0.2 (in at most 1 s); the server answers once they are sent.
    storm ??= flood(forger.sock, rinfo.port, 2000, 1000, (i) => challenge(0x70000000 + i));
    forgedSent = await storm;
    if (req.token === TOKEN) partsOf(doc("real"), 5).forEach(send);
    else send(challenge(TOKEN));
  });
  try {
    const { info } = await queryServer("127.0.0.1", real.port, { timeout: 3000 });
    t.diagnostic(`${stats.requests} requests for ${forgedSent} forged challenges`);
    // The first request, retries while the storm is sent (every 250 ms), the one with the token.
    assert.ok(stats.requests <= 2 + Math.ceil(1000 / 250), `${stats.requests} requests for ${forgedSent} forged challenges`);
    assert.equal(info.name, "real");
    assert.ok(forgedSent > 1000, `forged ${forgedSent}`);
  } finally {
    real.close();
    forger.close();
  }
});

test("a server answering only with new challenges: SAGL_ONLY_CHALLENGES after 3 rounds", async (t) => {
  let requests = 0;
  const s = await server("127.0.0.1", (m, rinfo, send) => {
    if (request(m) && ++requests <= 100000) send(challenge(0x10000 + requests));
  });
  try {
    const start = performance.now();
    const err = await rejectsWith(queryServer("127.0.0.1", s.port, { timeout: 1500 }), "SAGL_ONLY_CHALLENGES");
    t.diagnostic(`${requests} requests, ${(performance.now() - start).toFixed(0)} ms`);
    assert.match(err.message, /answers only with challenges/);
    assert.equal(requests, limits.challengeRounds, "requests sent");
    assert.ok(performance.now() - start < 1500, "ends before the timeout");
  } finally {
    s.close();
  }
});

test("a server repeating one challenge 20 times per request: no storm, SAGL_ONLY_CHALLENGES at the timeout", async (t) => {
  let requests = 0;
  const s = await server("127.0.0.1", (m, rinfo, send) => {
    if (!request(m) || ++requests > 2000) return;
    for (let i = 0; i < 20; i++) send(challenge(TOKEN)); // and never accepts it
  });
  try {
    const start = performance.now();
    await rejectsWith(queryServer("127.0.0.1", s.port, { timeout: 1000 }), "SAGL_ONLY_CHALLENGES");
    const ms = performance.now() - start;
    t.diagnostic(`${requests} requests, ${ms.toFixed(0)} ms`);
    assert.ok(ms >= 1000 && ms < 1500, `${ms} ms`);
    // The first request, one with the token, one retry every 250 ms.
    assert.ok(requests <= 2 + 1000 / 250, `${requests} requests`);
  } finally {
    s.close();
  }
});

test("JSON the client refuses: SAGL_BAD_ANSWER; what it takes", async (t) => {
  const nest = (d) => `{"a":${"[".repeat(d - 1)}${"]".repeat(d - 1)}}`;
  const refused = {
    "nested deeper than 64": nest(limits.maxJSONDepth + 1),
    "an array at the top": "[1,2,3]",
    "a string at the top": '"name"',
    "null": "null",
    "not JSON": '{"name":',
    "more than maxJSONItems items": `{"a":[${"0,".repeat(limits.maxJSONItems)}0]}`,
    "the total over maxJSON": null, // a header-only claim, below
  };
  for (const [what, json] of Object.entries(refused)) {
    await t.test(what, async () => {
      const s = await scripted((req, send, rinfo) => {
        if (json !== null) return s.stats.sendAll(partsOf(json, 1), rinfo);
        send(infoPart({ serial: 1, total: limits.maxJSON + 1, part: 0, parts: 65535, body: Buffer.from("{") }));
      });
      try {
        const start = performance.now();
        await rejectsWith(queryServer("127.0.0.1", s.port, { timeout: 1000 }), "SAGL_BAD_ANSWER");
        assert.ok(performance.now() - start < 1000, "before the timeout");
      } finally {
        s.close();
      }
    });
  }
  const taken = {
    "nested 64 deep": nest(limits.maxJSONDepth),
    "brackets, commas and escaped quotes inside strings": JSON.stringify({
      name: `\\"[[[[{{{{,,,,${"[".repeat(100)}"`, values: { k: ']]]}}}\\" [' }, tags: [",".repeat(300000)],
    }),
  };
  for (const [what, json] of Object.entries(taken)) {
    await t.test(what, async () => {
      const s = await scripted((req, send, rinfo) => s.stats.sendAll(partsOf(json, 1), rinfo));
      try {
        const { info } = await queryServer("127.0.0.1", s.port, { timeout: 2000 });
        assert.deepEqual(info, JSON.parse(json));
      } finally {
        s.close();
      }
    });
  }
});

test("a parse that ends after the deadline is SAGL_TIMEOUT", async () => {
  const json = doc("slow to parse", { players: 1 }); // one part: the first usable reply completes it
  const s = await scripted((req, send) => partsOf(json, 1).forEach(send));
  const parse = JSON.parse;
  let start = 0;
  // Stands in for a JSON that takes longer to parse than the time left.
  JSON.parse = function (text, ...rest) {
    if (text === json) while (performance.now() < start + 400); // at most 400 ms
    return parse.call(this, text, ...rest);
  };
  try {
    start = performance.now();
    await rejectsWith(queryServer("127.0.0.1", s.port, { timeout: 300 }), "SAGL_TIMEOUT");
  } finally {
    JSON.parse = parse;
    s.close();
  }
});

test("a logo over 16 MiB is refused at its first piece: SAGL_BAD_ANSWER", async () => {
  const logo = { sha256: "00".repeat(32), size: 1024 };
  let pieces = 0;
  const s = await scripted((req, send) => {
    if (req.kind === 1) return partsOf(doc("logo", { logo }), 1).forEach(send);
    if (++pieces > 100) return;
    send(logoPiece({ size: limits.maxLogo + 1, offset: req.offset, sum: Buffer.alloc(32, pieces), data: Buffer.alloc(1024) }));
  });
  try {
    const start = performance.now();
    const err = await rejectsWith(queryServer("127.0.0.1", s.port, { timeout: 1000, logo: true }), "SAGL_BAD_ANSWER");
    assert.match(err.message, /logo is 16777217 bytes/);
    assert.equal(pieces, 1);
    assert.ok(performance.now() - start < 1000);
  } finally {
    s.close();
  }
});
