// gamedig.mjs <type> <host> <port> [options-json]
//
// Asks one server with gamedig and prints its result as JSON on stdout.
// <type> is a gamedig game id (e.g. "wet") or a protocol name ("valve",
// "gamespy3", "quake3"); a protocol name is used as "protocol-<name>".
// options-json is merged over the defaults below (e.g. '{"requestRules":true}').
// Exit status: 0 answered, 1 the query failed, 2 bad usage.
import { GameDig, games, protocols } from 'gamedig'

const [type, host, portText, extra] = process.argv.slice(2)
if (!type || !host || !portText) {
  console.error('usage: gamedig.mjs <type> <host> <port> [options-json]')
  process.exit(2)
}
const port = Number(portText)
if (!Number.isInteger(port) || port < 1 || port > 65535) {
  console.error(`gamedig.mjs: bad port ${JSON.stringify(portText)}`)
  process.exit(2)
}

// resolveType accepts a game id, "protocol-<name>" or a bare protocol name.
function resolveType (t) {
  if (t.startsWith('protocol-') || t in games) return t
  if (t in protocols) return 'protocol-' + t
  return t // let gamedig report "Invalid game"
}

const options = {
  type: resolveType(type),
  host,
  port,
  givenPortOnly: true, // without it gamedig also tries the game's default ports
  maxRetries: 1,
  socketTimeout: 2000,
  attemptTimeout: 8000,
  ...(extra ? JSON.parse(extra) : {})
}

// bufferAsHex prints raw packet bytes (Buffers) as hex strings, not number arrays.
function bufferAsHex (key, value) {
  if (value && value.type === 'Buffer' && Array.isArray(value.data)) {
    return Buffer.from(value.data).toString('hex')
  }
  return value
}

// A hard stop in case a protocol waits forever on a missing reply.
const guard = setTimeout(() => {
  console.error('gamedig.mjs: no result within 20 s')
  process.exit(1)
}, 20000)

try {
  const state = await GameDig.query(options)
  clearTimeout(guard)
  process.stdout.write(JSON.stringify(state, bufferAsHex, 2) + '\n')
} catch (err) {
  clearTimeout(guard)
  console.error(`gamedig.mjs: ${options.type} ${host}:${port}: ${err && err.stack ? err.stack : err}`)
  process.exit(1)
}
