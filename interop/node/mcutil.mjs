// mcutil.mjs <basic|full|bedrock> <host> <port>
//
// Asks one server with npm minecraft-server-util (queryBasic, queryFull or
// statusBedrock) and prints its result as JSON on stdout (BigInts, such as
// the Bedrock server GUID, as decimal strings). SRV lookups are off (the library
// does one even for an IP otherwise). Exit status: 0 answered, 1 the query
// failed, 2 bad usage.
import util from 'minecraft-server-util'

const [mode, host, portText] = process.argv.slice(2)
const port = Number(portText)
if (!['basic', 'full', 'bedrock'].includes(mode) || !host || !Number.isInteger(port) || port < 1 || port > 65535) {
  console.error('usage: mcutil.mjs <basic|full|bedrock> <host> <port>')
  process.exit(2)
}

// queryBasic waits for a missing field until its timeout; this is a hard stop.
const guard = setTimeout(() => {
  console.error('mcutil.mjs: no result within 20 s')
  process.exit(1)
}, 20000)

const options = { enableSRV: false, timeout: 5000, sessionID: 0x01020304 }
try {
  const ask = { basic: util.queryBasic, full: util.queryFull, bedrock: util.statusBedrock }[mode]
  const result = await ask(host, port, mode === 'bedrock' ? { enableSRV: false, timeout: 5000 } : options)
  clearTimeout(guard)
  const bigints = (key, value) => typeof value === 'bigint' ? value.toString() : value
  process.stdout.write(JSON.stringify(result, bigints, 2) + '\n')
} catch (err) {
  clearTimeout(guard)
  console.error(`mcutil.mjs: ${mode} ${host}:${port}: ${err && err.stack ? err.stack : err}`)
  process.exit(1)
}
