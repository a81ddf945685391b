// SPDX-License-Identifier: MIT
// recover_test.mjs: run by clients/TestNodeRecover against a live queryd (or
// one not started yet) through feeder.mjs's Feed, over QUERYD_FEED_SOCKET.
// The good state at once, a patch queryd rejects (score 1.5) after 1 s
// unless QUERYD_RECOVER_BAD=0, a good patch (a player joins) after 1.5 s, a
// tick patch every 100 ms; each rejection printed as "rejected OP: ERROR".
// It runs for QUERYD_EXAMPLE_SECONDS (default 60). The same timeline as the
// other languages' recover tests (clients/recover_test.go).
import { Feed } from './feeder.mjs';

const feed = new Feed(process.env.QUERYD_FEED_SOCKET, { pingEvery: Number(process.env.QUERYD_FEED_PING || 10) * 1000 });
feed.on('disconnected', (err) => console.error(`feed error: ${err.message}`));
feed.on('rejected', (err) => console.log(`rejected ${err.op}: ${err.message}`));
const bad = process.env.QUERYD_RECOVER_BAD !== '0';

feed.replace({ name: 'recover test', map: 'good_map', max_players: 8, players: { 1: { name: 'Zoë', score: 3 } } });
console.log('good');
setTimeout(() => {
  if (!bad) return;
  feed.patch({ players: { 1: { score: 1.5 } } });
  console.log('bad');
}, 1000);
setTimeout(() => {
  feed.patch({ players: { 2: { name: 'Later', score: 2 } } });
  console.log('later');
}, 1500);
let tick = 0;
const ticker = setInterval(() => feed.patch({ values: { tick: ++tick } }), 100);
setTimeout(() => { clearInterval(ticker); feed.close(); }, Number(process.env.QUERYD_EXAMPLE_SECONDS || 60) * 1000);
