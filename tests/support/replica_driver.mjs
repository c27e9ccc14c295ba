// One OpenCode session through the real plugin (transpiled to JavaScript), for the replica test.
// Usage: node replica_driver.mjs PLUGIN.mjs SESSION_ID
// Sends one prompt, waits at most 30 s (calling no hook) until the outbox is empty, then prints
// which services (by origin) answered the outbox's batches, as JSON.
import { existsSync } from "node:fs"
import { join } from "node:path"
import { pathToFileURL } from "node:url"

const batches = {}
const fetchAsIs = globalThis.fetch
globalThis.fetch = async (url, init) => {
  const response = await fetchAsIs(url, init)
  const { origin, pathname } = new URL(String(url))
  if (pathname === "/v1/hooks") batches[origin] = (batches[origin] ?? 0) + 1
  return response
}
const [pluginPath, sessionID] = process.argv.slice(2)
const { default: plugin } = await import(pathToFileURL(pluginPath).href)
const directory = process.cwd()
const hooks = await plugin({ directory, worktree: directory })
const text = "Rule: money is always Decimal."
const info = { id: "msg_replica", sessionID, role: "user", time: { created: Date.now() }, agent: "build" }
await hooks["chat.message"]({ sessionID }, { message: info, parts: [{ id: "prt_replica", sessionID, messageID: info.id, type: "text", text }] })
const outbox = join(process.env.PLAIT_DATA_DIR, "outbox", `${process.env.OUTBOX_KEY}.jsonl`)
const deadline = Date.now() + 30_000
while ((existsSync(outbox) || existsSync(`${outbox}.sending`)) && Date.now() < deadline) {
  await new Promise((resolve) => setTimeout(resolve, 100))
}
console.log(JSON.stringify(batches))
await hooks.dispose?.()
process.exit(0)
