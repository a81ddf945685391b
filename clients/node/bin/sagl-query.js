#!/usr/bin/env node
// SPDX-License-Identifier: MIT
// sagl-query: ask a SAGL server about itself from a terminal (the seed's
// command-line client), with this package's own queryServer.
//
//   sagl-query HOST [PORT] [--timeout MS] [--logo FILE]
//   sagl-query HOST:PORT [--timeout MS] [--logo FILE]   (as queryd query takes it; [::1]:PORT for IPv6)
//
// Prints the server's JSON on stdout and the round trip on stderr. With
// --logo FILE it fetches the logo, checks it against its SHA-256 and saves
// it to FILE. Exit status: 0 answered; 1 the server did not answer (or
// answered with something the client refuses, or has no logo to save);
// 2 a usage error.
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";

import { queryServer } from "../index.js";

const usage = `usage: sagl-query HOST [PORT] [--timeout MS] [--logo FILE]
       sagl-query HOST:PORT [--timeout MS] [--logo FILE]

Asks the SAGL server at HOST:PORT (default port 7777; [::1]:PORT for IPv6) over UDP, prints its
JSON on stdout and the round trip on stderr; exits 1 when it does not answer.

  --timeout MS   how long to wait for the info, and again for the logo (default 1500)
  --logo FILE    fetch the logo, check its SHA-256, save it to FILE
`;

/**
 * Splits "HOST:PORT" or "[IPV6]:PORT" (the form queryd query takes) into
 * [host, port]; a name, an IPv4 address or a bare IPv6 address (two colons
 * or more) is [host, undefined].
 */
function splitHostPort(arg) {
  const v6 = /^\[([^\]]*)\](?::(.*))?$/.exec(arg);
  if (v6) return [v6[1], v6[2]];
  const i = arg.lastIndexOf(":");
  if (i < 0 || arg.indexOf(":") !== i) return [arg, undefined];
  return [arg.slice(0, i), arg.slice(i + 1)];
}

/** Parses argv into { host, port, timeout, logo }, or throws a usage error. */
function parse(argv) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      timeout: { type: "string" },
      logo: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) return { help: true };
  if (positionals.length < 1 || positionals.length > 2) throw new Error("want HOST and an optional PORT, or HOST:PORT");
  const [host, hostPort] = splitHostPort(positionals[0]);
  if (hostPort !== undefined && positionals.length === 2) throw new Error(`${positionals[0]} has a port already: give PORT once`);
  const portArg = hostPort ?? positionals[1] ?? "7777";
  const port = Number(portArg);
  if (!/^\d+$/.test(portArg) || port < 1 || port > 65535) throw new Error(`port ${JSON.stringify(portArg)}: want 1 to 65535`);
  let timeout = 1500;
  if (values.timeout !== undefined) {
    timeout = Number(values.timeout);
    if (!/^\d+$/.test(values.timeout) || timeout < 1 || timeout > 2 ** 31 - 1) {
      throw new Error(`--timeout ${JSON.stringify(values.timeout)}: want 1 to 2147483647 ms`);
    }
  }
  if (values.logo === "") throw new Error("--logo: want a file name");
  return { host, port, timeout, logo: values.logo };
}

async function main(argv) {
  let opts;
  try {
    opts = parse(argv);
  } catch (err) {
    process.stderr.write(`sagl-query: ${err.message}\n\n${usage}`);
    return 2;
  }
  if (opts.help) {
    process.stdout.write(usage);
    return 0;
  }
  const addr = opts.host.includes(":") ? `[${opts.host}]:${opts.port}` : `${opts.host}:${opts.port}`;
  let res;
  try {
    res = await queryServer(opts.host, opts.port, { timeout: opts.timeout, logo: Boolean(opts.logo) });
  } catch (err) {
    const hint = err.code === "ECONNREFUSED" ? " (nothing listens on that port)" : "";
    process.stderr.write(`sagl-query: ${addr}: ${err.message}${hint}\n`);
    return 1;
  }
  process.stdout.write(JSON.stringify(res.info, null, 2) + "\n");
  process.stderr.write(`sagl ${addr}: round trip ${res.ping.toFixed(2)} ms\n`);
  if (!opts.logo) return 0;
  if (!res.logo) {
    process.stderr.write(`sagl-query: ${addr} has no logo; nothing saved\n`);
    return 1;
  }
  try {
    writeFileSync(opts.logo, res.logo);
  } catch (err) {
    process.stderr.write(`sagl-query: logo: ${err.message}\n`);
    return 1;
  }
  const sum = res.info.branding?.logo?.sha256;
  const got = createHash("sha256").update(res.logo).digest("hex");
  process.stderr.write(`logo: ${res.logo.length} bytes, sha256 ${got}${sum && sum !== got ? ` (the JSON names ${sum}: the logo changed meanwhile)` : ""}, saved to ${opts.logo}\n`);
  return 0;
}

process.exitCode = await main(process.argv.slice(2));
