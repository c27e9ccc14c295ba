// One OpenCode session through the real plugin (transpiled to JavaScript), for the outbox tests.
// Usage: node outbox_driver.mjs PLUGIN.mjs SESSION_ID
// Sends a prompt and prints "sent"; reads "again" on stdin, sends a second prompt and prints
// "kept" or "delivered" (whether it waits in the outbox); then waits at most 30 s, calling no
// hook, until the outbox is empty, and prints "flushed" or "stuck".
import { existsSync } from "node:fs"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { pathToFileURL } from "node:url"

const [pluginPath, sessionID] = process.argv.slice(2)
const { default: plugin } = await import(pathToFileURL(pluginPath).href)
const directory = process.cwd()
const hooks = await plugin({ directory, worktree: directory })
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]()

async function prompt(text) {
  const info = { id: `msg_${text}`, sessionID, role: "user", time: { created: Date.now() }, agent: "build" }
  const parts = [{ id: `prt_${text}`, sessionID, messageID: info.id, type: "text", text }]
  await hooks["chat.message"]({ sessionID }, { message: info, parts })
}

function outboxEmpty() {
  const folder = join(process.env.PLAIT_DATA_DIR, "outbox")
  if (!existsSync(folder)) return true
  return ![".jsonl", ".jsonl.sending"].some((end) => existsSync(join(folder, `${process.env.OUTBOX_KEY}${end}`)))
}

await prompt("We decided to use Postgres.")
console.log("sent")
await lines.next()
await prompt("Rule: money is always Decimal.")
console.log(outboxEmpty() ? "delivered" : "kept")
const deadline = Date.now() + 30_000
while (!outboxEmpty() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100))
console.log(outboxEmpty() ? "flushed" : "stuck")
await hooks.dispose?.()
process.exit(0)
