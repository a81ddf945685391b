// Test kit: a real queryd for the tests in ../test, built with `go build`
// (or $QUERYD_BIN), run on 127.0.0.1 and fed over its feed socket.
import { spawn, execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "../../..");

/**
 * A PNG by its magic bytes (all queryd checks) followed by random bytes: a
 * few pieces, the last one short.
 */
export function makeLogo() {
  return Buffer.concat([Buffer.from("89504e470d0a1a0a", "hex"), randomBytes(5000)]);
}

/** Returns $QUERYD_BIN, or builds queryd into dir and returns its path. */
export function buildQueryd(dir) {
  if (process.env.QUERYD_BIN) return process.env.QUERYD_BIN;
  const bin = path.join(dir, "queryd");
  execFileSync("go", ["build", "-o", bin, "./cmd/queryd"], { cwd: repo, stdio: "inherit" });
  return bin;
}

/**
 * Starts the daemon on config and waits for its log to name the UDP address
 * (and the HTTP one when http is true). Resolves to { p, udpPort, httpAddr }.
 */
export function startDaemon(bin, config, { http = true } = {}) {
  return new Promise((resolve, reject) => {
    const p = spawn(bin, ["-config", config], { stdio: ["ignore", "ignore", "pipe"] });
    let log = "";
    const timer = setTimeout(() => reject(new Error(`queryd did not start:\n${log}`)), 20000);
    p.on("exit", (code) => reject(new Error(`queryd exited with ${code}:\n${log}`)));
    p.stderr.on("data", (chunk) => {
      log += chunk;
      const udp = /part=udp udp=127\.0\.0\.1:(\d+)/.exec(log);
      const httpm = /part=sagl-http http=(127\.0\.0\.1:\d+)/.exec(log);
      if (udp && (httpm || !http) && /queryd started/.test(log)) {
        clearTimeout(timer);
        resolve({ p, udpPort: Number(udp[1]), httpAddr: httpm?.[1] });
      }
    });
  });
}

/** Sends one feed message to the socket at sock and resolves with its reply. */
export function feed(sock, msg) {
  return new Promise((resolve, reject) => {
    const c = net.createConnection(sock);
    let buf = "";
    c.on("error", reject);
    c.on("data", (d) => {
      buf += d;
      const nl = buf.indexOf("\n");
      if (nl >= 0) {
        c.end();
        resolve(JSON.parse(buf.slice(0, nl)));
      }
    });
    c.write(JSON.stringify(msg) + "\n");
  });
}

/** Stops a daemon startDaemon started. */
export function stopDaemon(p) {
  p?.removeAllListeners("exit");
  p?.kill("SIGTERM");
}
