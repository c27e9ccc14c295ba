/**
 * Plugin-to-service round trip: chat.message + experimental.chat.messages.transform, through the
 * real plugin code, against a running plait service (PLAIT_URL, PLAIT_TOKEN).
 * Run with Bun (`BUN_BE_BUN=1 opencode run.ts ...` works): bun bench_roundtrip.ts PLUGIN N
 * Prints one JSON line: {"n", "p50_ms", "p99_ms", "max_ms", "enveloped"}.
 */
const [pluginPath, count = "500"] = process.argv.slice(2)
const { default: plugin } = await import(pluginPath)
const directory = process.cwd()
const hooks = await plugin({ directory, worktree: directory } as any)
const sessionID = `ses_bench${Date.now()}`
const model = { providerID: "mock", modelID: "mock-model" }

function userMessage(index: number, text: string) {
  const id = `msg_u${index}`
  return {
    info: { id, sessionID, role: "user", time: { created: Date.now() }, agent: "build", model },
    parts: [{ id: `prt_u${index}`, sessionID, messageID: id, type: "text", text }],
  }
}

function history(turns: number) {
  const messages: any[] = []
  for (let index = 0; index < turns; index++) {
    messages.push(userMessage(index, `Request ${index}: we decided to keep module ${index} small.`))
    const id = `msg_a${index}`
    messages.push({
      info: { id, sessionID, role: "assistant", parentID: `msg_u${index}`, modelID: "mock-model",
              providerID: "mock", mode: "build", agent: "build", cost: 0,
              path: { cwd: directory, root: directory }, time: { created: Date.now() },
              tokens: { input: 100, output: 5, reasoning: 0, cache: { read: 0, write: 0 } } },
      parts: [{ id: `prt_a${index}`, sessionID, messageID: id, type: "text", text: "Done. ".repeat(40) }],
    })
  }
  return messages
}

const times: number[] = []
let enveloped = 0
const total = Number(count)
for (let index = 0; index < total + 50; index++) {
  const message = userMessage(1000 + index, `Turn ${index}: please refactor src/app_${index}.py`)
  const started = performance.now()
  await hooks["chat.message"]({ sessionID }, { message: message.info, parts: message.parts })
  const output = { messages: [...history(10), message] }
  await hooks["experimental.chat.messages.transform"]({}, output)
  const elapsed = performance.now() - started
  if (index >= 50) {
    times.push(elapsed)
    if (JSON.stringify(output.messages.at(-1)).includes("<session_memory")) enveloped++
  }
}
times.sort((a, b) => a - b)
const pick = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]
console.log(JSON.stringify({ n: times.length, p50_ms: pick(0.5), p99_ms: pick(0.99), max_ms: times.at(-1), enveloped }))
await hooks.dispose?.()
process.exit(0)
