// One OpenCode session through the real plugin (transpiled to JavaScript), for the hold test.
// Usage: node hold_driver.mjs PLUGIN.mjs SESSION_ID SPOOLED_ORIGIN
// Answers to chat.message from SPOOLED_ORIGIN say `X-Plait-Kept: spooled` (that replica's lane is
// behind: the call waits in its spool). Lines on stdin drive it: "say TEXT" sends a prompt and
// prints the origin that answered its post, or "kept" when none did; "wait" waits at most 30 s
// (calling no hook) until the outbox is empty and prints the origins that answered the outbox's
// batches, as JSON; "end" stops.
import { existsSync } from "node:fs"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { pathToFileURL } from "node:url"

const [pluginPath, sessionID, spooledOrigin] = process.argv.slice(2)
const batches = {}
let answeredBy = "kept"
const fetchAsIs = globalThis.fetch
globalThis.fetch = async (url, init) => {
  const response = await fetchAsIs(url, init)
  const { origin, pathname } = new URL(String(url))
  if (pathname === "/v1/hooks") batches[origin] = (batches[origin] ?? 0) + 1
  if (pathname !== "/v1/hooks/chat.message") return response
  answeredBy = origin
  if (origin !== spooledOrigin || response.status !== 200) return response
  const headers = new Headers(response.headers)
  headers.set("x-plait-kept", "spooled")
  return new Response(await response.text(), { status: 200, headers })
}
const { default: plugin } = await import(pathToFileURL(pluginPath).href)
const directory = process.cwd()
const hooks = await plugin({ directory, worktree: directory })
const outbox = join(process.env.PLAIT_DATA_DIR, "outbox", `${process.env.OUTBOX_KEY}.jsonl`)
let turn = 0
for await (const line of createInterface({ input: process.stdin })) {
  if (line.startsWith("say ")) {
    answeredBy = "kept"
    turn += 1
    const info = { id: `msg_hold${turn}`, sessionID, role: "user", time: { created: Date.now() }, agent: "build" }
    const part = { id: `prt_hold${turn}`, sessionID, messageID: info.id, type: "text", text: line.slice(4) }
    await hooks["chat.message"]({ sessionID }, { message: info, parts: [part] })
    console.log(answeredBy)
  } else if (line === "wait") {
    const deadline = Date.now() + 30_000
    while ((existsSync(outbox) || existsSync(`${outbox}.sending`)) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    console.log(JSON.stringify(batches))
  } else break
}
await hooks.dispose?.()
process.exit(0)
