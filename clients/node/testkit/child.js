// Runs one queryServer against 127.0.0.1:PORT with the options given as JSON
// and prints one line: how it ended, how long it took and the process's peak
// RSS, so that a test can bound what a hostile server makes the client hold.
//
//   node testkit/child.js PORT '{"timeout":1500,"logo":true}'
import { queryServer } from "../index.js";

const port = Number(process.argv[2]);
const options = JSON.parse(process.argv[3] ?? "{}");
const start = performance.now();
const out = { ok: false, code: null, message: null, ms: 0, maxRSS: 0, name: null, logo: null };
try {
  const { info, logo } = await queryServer("127.0.0.1", port, options);
  out.ok = true;
  out.name = typeof info?.name === "string" ? info.name : typeof info;
  out.logo = logo ? logo.length : null;
} catch (err) {
  out.code = err.code ?? null;
  out.message = String(err.message).slice(0, 300);
}
out.ms = Math.round(performance.now() - start);
out.maxRSS = process.resourceUsage().maxRSS * 1024;
process.stdout.write(JSON.stringify(out) + "\n");
process.exit(0);
