// The sagl-query command (bin/sagl-query.js, the package's "bin") against a
// real queryd with a logo, against scripted servers on loopback (no logo, a
// logo that does not match its hash) and against ports where nothing
// answers: what it prints, the file it saves, its exit status.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import dgram from "node:dgram";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { queryServer } from "../index.js";
import { doc, logoPiece, partsOf, request, server } from "../testkit/sagl.js";
import { buildQueryd, feed, makeLogo, startDaemon, stopDaemon } from "../testkit/queryd.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const pkg = JSON.parse(fs.readFileSync(path.join(here, "../package.json"), "utf8"));
const bin = path.join(here, "..", pkg.bin["sagl-query"]);

let dir, daemon, udpPort, logo;

/** Runs sagl-query with args: resolves to { code, stdout, stderr, ms }. */
function run(...args) {
  return new Promise((resolve) => {
    const start = performance.now();
    execFile(process.execPath, [bin, ...args], { timeout: 20000 }, (err, stdout, stderr) => {
      resolve({ code: err ? err.code : 0, stdout, stderr, ms: performance.now() - start });
    });
  });
}

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "qdc"));
  logo = makeLogo();
  fs.writeFileSync(path.join(dir, "logo.png"), logo);
  const sock = path.join(dir, "feed.sock");
  fs.writeFileSync(
    path.join(dir, "queryd.toml"),
    `[listen]
udp = ["127.0.0.1:0"]
[feed]
socket = "${sock}"
[admin]
listen = ""
[sagl]
logo = "${path.join(dir, "logo.png")}"
`,
  );
  ({ p: daemon, udpPort } = await startDaemon(buildQueryd(dir), path.join(dir, "queryd.toml"), { http: false }));
  const reply = await feed(sock, {
    op: "replace",
    state: { name: "Example RP", max_players: 50, players: { 0: { name: "Thomas", score: 12, ping: 31 } }, values: { map: "Los Santos" } },
  });
  assert.equal(reply.ok, true, JSON.stringify(reply));
});

after(() => {
  stopDaemon(daemon);
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

test("the npm package ships the repository's LICENSE (MIT)", () => {
  assert.equal(pkg.license, "MIT");
  const own = fs.readFileSync(path.join(here, "..", "LICENSE"), "utf8");
  assert.equal(own, fs.readFileSync(path.join(here, "..", "..", "..", "LICENSE"), "utf8"), "clients/node/LICENSE differs from LICENSE");
});

test("package.json declares sagl-query as its bin, an executable node script", () => {
  assert.equal(pkg.bin["sagl-query"], "./bin/sagl-query.js");
  assert.ok(pkg.files.includes("bin/"), `files ${pkg.files}`);
  assert.match(fs.readFileSync(bin, "utf8"), /^#!\/usr\/bin\/env node\n/);
  assert.ok(fs.statSync(bin).mode & 0o111, "not executable");
});

test("prints the JSON on stdout and the round trip on stderr", async () => {
  const r = await run("127.0.0.1", String(udpPort), "--timeout", "3000");
  assert.equal(r.code, 0, r.stderr);
  const info = JSON.parse(r.stdout);
  assert.equal(info.name, "Example RP");
  assert.deepEqual(info.players.list, [{ id: 0, name: "Thomas", score: 12, ping: 31 }]);
  assert.deepEqual(info, (await queryServer("127.0.0.1", udpPort, { timeout: 3000 })).info);
  assert.match(r.stderr, new RegExp(`^sagl 127\\.0\\.0\\.1:${udpPort}: round trip \\d+\\.\\d\\d ms\\n$`));
});

test("HOST:PORT, as queryd query takes it, is the same as HOST PORT", async () => {
  const r = await run(`127.0.0.1:${udpPort}`, "--timeout", "3000");
  assert.equal(r.code, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout).name, "Example RP");
  assert.match(r.stderr, new RegExp(`^sagl 127\\.0\\.0\\.1:${udpPort}: round trip `));
});

test("[::1]:PORT and a bare IPv6 address are read as IPv6", async () => {
  // Nothing answers SAGL on [::1] here (the daemon listens on 127.0.0.1):
  // the address it asked, in its error line, shows how it was read.
  for (const [args, addr] of [[["[::1]:1"], "[::1]:1"], [["::1", "1"], "[::1]:1"], [["[::1]", "1"], "[::1]:1"]]) {
    const r = await run(...args, "--timeout", "300");
    assert.equal(r.code, 1, `${args}: ${r.stderr}`);
    assert.ok(r.stderr.startsWith(`sagl-query: ${addr}: `), `${args}: ${r.stderr}`);
  }
});

test("--logo FILE saves the logo, checked against its SHA-256", async () => {
  const file = path.join(dir, "saved.png");
  const r = await run("127.0.0.1", String(udpPort), "--logo", file, "--timeout", "3000");
  assert.equal(r.code, 0, r.stderr);
  assert.ok(fs.readFileSync(file).equals(logo), "the saved logo differs");
  const sha = createHash("sha256").update(logo).digest("hex");
  assert.equal(JSON.parse(r.stdout).branding.logo.sha256, sha);
  assert.match(r.stderr, new RegExp(`logo: ${logo.length} bytes, sha256 ${sha}, saved to ${file.replaceAll(".", "\\.")}\\n`));
});

// A scripted SAGL server without challenges: the info parts of json, and
// the logo pieces of data under the hash sum.
async function scripted(json, data, sum) {
  return server("127.0.0.1", (m, rinfo, send) => {
    const req = request(m);
    if (req?.kind === 1) partsOf(json, 1).forEach(send);
    if (req?.kind === 2) {
      const size = data?.length ?? 0;
      send(logoPiece({ size, offset: req.offset, sum, data: data ? data.subarray(req.offset, req.offset + 1024) : Buffer.alloc(0) }));
    }
  });
}

test("--logo: a logo that does not match its SHA-256 is not saved (exit 1)", async () => {
  const data = Buffer.alloc(3000, 7);
  const wrong = createHash("sha256").update("another logo").digest();
  const s = await scripted(doc("forged", { players: 1, logo: { sha256: wrong.toString("hex"), size: data.length } }), data, wrong);
  const file = path.join(dir, "forged.png");
  const r = await run("127.0.0.1", String(s.port), "--logo", file, "--timeout", "2000");
  s.close();
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /does not match its SHA-256/);
  assert.equal(r.stdout, "", "printed the JSON of a failed query");
  assert.ok(!fs.existsSync(file), "the bad logo was saved");
});

test("--logo when the server has none: the JSON, then exit 1 and no file", async () => {
  const s = await scripted(doc("bare", { players: 1 }), null, Buffer.alloc(32));
  const file = path.join(dir, "none.png");
  const r = await run("127.0.0.1", String(s.port), "--logo", file, "--timeout", "2000");
  s.close();
  assert.equal(r.code, 1, r.stderr);
  assert.equal(JSON.parse(r.stdout).name, "bare");
  assert.match(r.stderr, /has no logo; nothing saved/);
  assert.ok(!fs.existsSync(file));
});

test("exit 1 when the server does not answer within --timeout", async () => {
  const s = dgram.createSocket("udp4");
  await new Promise((r) => s.bind(0, "127.0.0.1", r));
  const r = await run("127.0.0.1", String(s.address().port), "--timeout", "300");
  s.close();
  assert.equal(r.code, 1);
  assert.equal(r.stdout, "");
  assert.match(r.stderr, /no answer from 127\.0\.0\.1:\d+ within 300 ms/);
  assert.ok(r.ms < 5000, `${r.ms} ms`);
});

test("exit 1 at once when nothing listens on the port", async () => {
  const s = dgram.createSocket("udp4");
  await new Promise((r) => s.bind(0, "127.0.0.1", r));
  const port = s.address().port;
  await new Promise((r) => s.close(r));
  const r = await run("127.0.0.1", String(port), "--timeout", "10000");
  assert.equal(r.code, 1);
  assert.match(r.stderr, /ECONNREFUSED \(nothing listens on that port\)/);
  assert.ok(r.ms < 5000, `${r.ms} ms: waited for the timeout`);
});

test("usage errors exit 2 with the usage; --help exits 0", async () => {
  for (const args of [[], ["127.0.0.1", "99999"], ["127.0.0.1", "x"], ["h", "1", "2"], ["h", "--timeout", "0"], ["h", "--timeout", "1.5"], ["h", "--logo"], ["h", "--nope"], ["127.0.0.1:1", "2"], ["127.0.0.1:x"], ["127.0.0.1:"]]) {
    const r = await run(...args);
    assert.equal(r.code, 2, `${args}: ${r.stderr}`);
    assert.match(r.stderr, /usage: sagl-query HOST \[PORT\]/, `${args}`);
    assert.equal(r.stdout, "");
  }
  const h = await run("--help");
  assert.equal(h.code, 0);
  assert.match(h.stdout, /^usage: sagl-query/);
});
