// The client against a scripted server: challenge, lost parts, and a serial
// change between two answers (the JSON changed): it must start again from
// the new serial and return the new JSON.
import { test } from "node:test";
import assert from "node:assert/strict";
import dgram from "node:dgram";

import { queryServer } from "../index.js";

const PART = 1180;

function parts(json, serial) {
  const body = Buffer.from(json);
  const n = Math.ceil(body.length / PART);
  const out = [];
  for (let i = 0; i < n; i++) {
    const h = Buffer.alloc(20);
    h.write("SAGR", 0, "latin1");
    h[4] = 1;
    h[5] = 1;
    h.writeUInt32LE(serial, 8);
    h.writeUInt32LE(body.length, 12);
    h.writeUInt16LE(i, 16);
    h.writeUInt16LE(n, 18);
    out.push(Buffer.concat([h, body.subarray(i * PART, (i + 1) * PART)]));
  }
  return out;
}

function doc(name) {
  const list = Array.from({ length: 100 }, (_, id) => ({ id, name: `P${id}`, score: 0, ping: 0 }));
  return JSON.stringify({ query: 1, name, version: "", protocol: 0, players: { online: 100, max: 100, list } });
}

test("a new serial mid-transfer restarts the reassembly", async () => {
  const server = dgram.createSocket("udp4");
  const TOKEN = 0x01020304;
  const oldParts = parts(doc("old"), 7);
  const newParts = parts(doc("new"), 8);
  assert.ok(oldParts.length >= 4);
  let answered = 0;
  server.on("message", (m, rinfo) => {
    const send = (b) => server.send(b, rinfo.port, rinfo.address);
    assert.equal(m.length, 64);
    if (m.readUInt32LE(8) !== TOKEN) {
      const c = Buffer.alloc(12);
      c.write("SAGR", 0, "latin1");
      c[4] = 1;
      c.writeUInt32LE(TOKEN, 8);
      return send(c);
    }
    answered++;
    if (answered === 1) oldParts.slice(0, 2).forEach(send); // the rest is lost
    else [...newParts].reverse().forEach(send);
  });
  await new Promise((r) => server.bind(0, "127.0.0.1", r));
  try {
    const { info } = await queryServer("127.0.0.1", server.address().port, { timeout: 3000 });
    assert.equal(info.name, "new");
    assert.equal(info.players.list.length, 100);
    assert.ok(answered >= 2);
  } finally {
    server.close();
  }
});
