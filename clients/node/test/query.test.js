// Runs the client against a real queryd: builds it (or takes $QUERYD_BIN),
// starts it on loopback with a logo, feeds 1,000 players over the feed
// socket, and checks what queryServer and the HTTP endpoint return.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import dgram from "node:dgram";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

import { queryServer, encodeRequest } from "../index.js";
import { buildQueryd, feed, makeLogo, startDaemon, stopDaemon } from "../testkit/queryd.js";

let dir, daemon, udpPort, httpAddr, logo;

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "qdn"));
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
http = "127.0.0.1:0"
logo = "${path.join(dir, "logo.png")}"
`,
  );
  ({ p: daemon, udpPort, httpAddr } = await startDaemon(buildQueryd(dir), path.join(dir, "queryd.toml")));
  const players = {};
  for (let i = 0; i < 1000; i++) players[i] = { name: `Player ${i}`, score: i % 50, ping: 20 + (i % 100) };
  const reply = await feed(sock, {
    op: "replace",
    state: {
      name: "Example RP", version: "0.2.0", protocol: 102, max_players: 1000, players,
      branding: { primary: "#ff8800" }, gamemode: "Roleplay", tags: ["roleplay", "whitelist"],
      links: { website: "https://example.com" }, values: { map: "Los Santos", copsOnDuty: 3 },
    },
  });
  assert.equal(reply.ok, true, JSON.stringify(reply));
});

after(() => {
  stopDaemon(daemon);
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

test("queryServer reassembles 1,000 players and fetches the logo by its hash", async () => {
  const { info, ping, logo: got } = await queryServer("127.0.0.1", udpPort, { timeout: 3000, logo: true });
  assert.equal(info.query, 1);
  assert.equal(info.name, "Example RP");
  assert.equal(info.version, "0.2.0");
  assert.equal(info.protocol, 102);
  assert.equal(info.players.online, 1000);
  assert.equal(info.players.max, 1000);
  assert.equal(info.players.list.length, 1000);
  assert.equal(info.players.truncated, undefined);
  assert.deepEqual(info.players.list[999], { id: 999, name: "Player 999", score: 49, ping: 119 });
  assert.deepEqual(info.values, { copsOnDuty: 3, map: "Los Santos" });
  assert.equal(info.branding.primary, "#ff8800");
  assert.equal(info.branding.secondary, null);
  const sha = createHash("sha256").update(logo).digest("hex");
  assert.deepEqual(info.branding.logo, { sha256: sha, size: logo.length });
  assert.ok(Buffer.isBuffer(got) && got.equals(logo), "logo bytes");
  assert.ok(typeof ping === "number" && ping >= 0 && ping < 3000, `ping ${ping}`);
  const without = await queryServer("127.0.0.1", udpPort, { timeout: 3000 });
  assert.equal(without.logo, null);
  assert.deepEqual(without.info, info);
});

test("the HTTP JSON equals the UDP JSON; /logo has the hash as ETag", async () => {
  const { info } = await queryServer("127.0.0.1", udpPort, { timeout: 3000 });
  const res = await fetch(`http://${httpAddr}/query`);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("access-control-allow-origin"), "*");
  assert.deepEqual(await res.json(), info);
  const l = await fetch(`http://${httpAddr}/logo`);
  assert.equal(l.headers.get("etag"), `"${info.branding.logo.sha256}"`);
  assert.ok(Buffer.from(await l.arrayBuffer()).equals(logo));
});

test("queryServer rejects when nothing answers", async () => {
  const s = dgram.createSocket("udp4");
  await new Promise((r) => s.bind(0, "127.0.0.1", r));
  const port = s.address().port; // bound but silent
  const start = Date.now();
  await assert.rejects(queryServer("127.0.0.1", port, { timeout: 300 }), { code: "SAGL_TIMEOUT", message: /no answer/ });
  assert.ok(Date.now() - start < 2000);
  s.close();
});

test("queryServer rejects with ECONNREFUSED when nothing listens (its socket is connected)", async () => {
  const s = dgram.createSocket("udp4");
  await new Promise((r) => s.bind(0, "127.0.0.1", r));
  const port = s.address().port;
  await new Promise((r) => s.close(r)); // now closed: the host answers with ICMP port unreachable
  const start = Date.now();
  await assert.rejects(queryServer("127.0.0.1", port, { timeout: 1000 }), { code: "ECONNREFUSED" });
  assert.ok(Date.now() - start < 1000);
});

test("encodeRequest is the 64-byte zero-padded request", () => {
  const b = encodeRequest(2, 0x11223344, 2048);
  assert.equal(b.length, 64);
  assert.equal(b.subarray(0, 16).toString("hex"), "5341475101020000443322110008" + "0000");
  assert.ok(b.subarray(16).every((x) => x === 0));
});
