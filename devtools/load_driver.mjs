// plait bench load's driver: many OpenCode sessions at once through the real plugin, in plain Node.
//
// Usage: node load_driver.mjs PLUGIN.mjs SESSIONS HOOKS OUT.json [SETTLE_SECONDS] [PACE_MS]
// The plugin finds the service the way it does inside OpenCode (PLAIT_DATA_DIR's service file and
// token, or PLAIT_URL/PLAIT_TOKEN). Each session is its own plugin instance, as each OpenCode
// process has its own, and plays HOOKS hook calls in OpenCode's order, back to back (no model
// between them: the worst case for the service) or PACE_MS apart. Every prompt carries a unique marker so the
// bench can count which ones were stored, and in which order. Times are what OpenCode waits for
// each hook. Afterwards the driver waits (at most SETTLE_SECONDS) until the plugins' outboxes are
// empty, nudging an older plugin (which only flushes after a successful call) with a bare call;
// the plugin instances live until then (an OpenCode process outlives its last prompt).
// With PLAIT_LOAD_BUS_EVENTS set, each turn also publishes the bus events OpenCode sends around it
// that hold nothing plait reads (message updates, step and tool parts, a part still streaming).
// With PLAIT_LOAD_USERS set, each session is a user of its own: its plugin's data dir (outbox,
// standby answers) is PLAIT_DATA_DIR/users/N, as on that user's machine.
import { existsSync, readdirSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { pathToFileURL } from "node:url"

const [pluginPath, sessionCount = "50", hookCount = "40", outPath, settleSeconds = "120", paceMs = "0"] =
  process.argv.slice(2)
const busEvents = Boolean(process.env.PLAIT_LOAD_BUS_EVENTS)
// Which service answered each hook post (by origin): with replicas, how the sessions spread.
const answeredBy = {}
let progressAt = 0
const fetchAsIs = globalThis.fetch
globalThis.fetch = async (url, init) => {
  const response = await fetchAsIs(url, init)
  const { origin, pathname } = new URL(String(url))
  if (pathname.startsWith("/v1/hooks")) {
    answeredBy[origin] = (answeredBy[origin] ?? 0) + 1
    if (Date.now() - progressAt > 50) {
      progressAt = Date.now() // the bench kills a service only once it answered (OUT.json.progress)
      writeFileSync(`${outPath}.progress`, JSON.stringify(answeredBy))
    }
  }
  return response
}
const { default: plugin } = await import(pathToFileURL(pluginPath).href)
const directory = process.cwd()
const run = Date.now().toString(36)
const model = { providerID: "mock", modelID: "mock-model" }
const times = {}
const prompts = {}
let enveloped = 0
let firstEnveloped = 0 // sessions whose first model call carried the envelope
let transforms = 0
let errors = 0
let ids = 0

function id(prefix) {
  ids += 1
  return `${prefix}_${run}${String(ids).padStart(7, "0")}`
}

function note(name, started) {
  ;(times[name] ??= []).push(performance.now() - started)
}

async function timed(name, work) {
  const started = performance.now()
  try {
    await work()
  } catch {
    errors += 1
  }
  note(name, started)
}

function userMessage(sessionID, text) {
  const messageID = id("msg")
  const info = { id: messageID, sessionID, role: "user", time: { created: Date.now() }, agent: "build", model }
  return { info, parts: [{ id: id("prt"), sessionID, messageID, type: "text", text }] }
}

/** The hook calls of one turn, in the order OpenCode makes them. */
function turn(hooks, sessionID, index, history, sent) {
  const text = `Prompt ${sessionID} #${index} [${run}]: we decided to keep module_${index} small; refactor src/module_${index}.py.`
  const message = userMessage(sessionID, text)
  const callID = id("call")
  const partID = id("prt")
  const assistantID = id("msg")
  return [
    ["chat.message", async () => {
      sent.push(text)
      await hooks["chat.message"]({ sessionID }, { message: message.info, parts: message.parts })
      history.push(message)
    }],
    ["experimental.chat.messages.transform", async () => {
      const output = { messages: history.slice(-6).map((m) => structuredClone(m)) }
      await hooks["experimental.chat.messages.transform"]({}, output)
      transforms += 1
      if (!JSON.stringify(output.messages.at(-1)).includes("<session_memory")) return
      enveloped += 1
      if (index === 0) firstEnveloped += 1
    }],
    ["tool.execute.before", async () => {
      await hooks["tool.execute.before"]({ tool: "bash", sessionID, callID }, { args: { command: "pytest -q" } })
    }],
    ["tool.execute.after", async () => {
      const output = { title: "pytest -q", output: `${index} passed in 0.1s`, metadata: { exit: 0 } }
      await hooks["tool.execute.after"]({ tool: "bash", sessionID, callID, args: { command: "pytest -q" } }, output)
    }],
    ["event", async () => {
      if (busEvents) for (const event of quietEvents(message, assistantID, callID)) await hooks.event({ event })
      const part = {
        id: partID, sessionID, messageID: assistantID, type: "text",
        text: `Done with module ${index}.`, time: { start: Date.now(), end: Date.now() },
      }
      await hooks.event({ event: { type: "message.part.updated", properties: { part } } })
    }],
  ]
}

/**
 * The other bus events OpenCode (1.18.33) publishes around a turn with one tool call: the
 * messages' updates and the step, tool and streaming text parts. None holds anything plait reads.
 */
function quietEvents(message, assistantID, callID) {
  const { sessionID } = message.info
  const started = Date.now()
  const assistant = (time) => ({
    type: "message.updated",
    properties: {
      sessionID,
      info: {
        id: assistantID, sessionID, role: "assistant", time, parentID: message.info.id, ...model,
        cost: 0, tokens: { input: 120, output: 30, reasoning: 0, cache: { read: 0, write: 0 } },
      },
    },
  })
  const part = (fields) => ({
    type: "message.part.updated",
    properties: { sessionID, part: { id: id("prt"), sessionID, messageID: assistantID, ...fields } },
  })
  const input = { command: "pytest -q" }
  const tool = (state) => part({ type: "tool", callID, tool: "bash", state: { input, ...state } })
  return [
    { type: "message.updated", properties: { sessionID, info: message.info } },
    assistant({ created: started }),
    part({ type: "step-start" }),
    tool({ status: "pending", raw: "" }),
    tool({ status: "running", time: { start: started } }),
    tool({ status: "completed", output: "1 passed", title: "pytest -q", time: { start: started, end: Date.now() } }),
    part({ type: "text", text: "", time: { start: Date.now() } }),
    part({ type: "step-finish", reason: "stop", cost: 0, tokens: { input: 120, output: 30 } }),
    assistant({ created: started, completed: Date.now() }),
  ]
}

const baseDataDir = process.env.PLAIT_DATA_DIR
const lockstep = process.env.PLAIT_LOAD_LOCKSTEP === "1"
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

async function playSession(number) {
  if (process.env.PLAIT_LOAD_USERS) process.env.PLAIT_DATA_DIR = join(baseDataDir, "users", String(number))
  const hooks = await plugin({ directory, worktree: directory })
  const sessionID = id("ses")
  const sent = []
  prompts[sessionID] = sent
  const history = []
  const calls = [["event", () => hooks.event({
    event: { type: "session.created", properties: { info: { id: sessionID, title: `load ${number}`, time: { created: Date.now() } } } },
  })]]
  for (let index = 0; calls.length < Number(hookCount); index++) calls.push(...turn(hooks, sessionID, index, history, sent))
  // paced sessions began apart (unless in lockstep): their starts spread over one pause
  if (Number(paceMs) > 0 && !lockstep) await sleep((Number(paceMs) * number) / Number(sessionCount))
  for (const [name, work] of calls.slice(0, Number(hookCount))) {
    await timed(name, work)
    if (Number(paceMs) > 0) await sleep(Number(paceMs))
  }
  return hooks // disposed after the settle wait: an OpenCode process outlives its last prompt
}

function outboxBacklog() {
  if (!baseDataDir) return 0
  const folders = process.env.PLAIT_LOAD_USERS
    ? Array.from({ length: Number(sessionCount) }, (_, n) => join(baseDataDir, "users", String(n), "outbox"))
    : [join(baseDataDir, "outbox")]
  let bytes = 0
  const walk = (path) => {
    for (const name of readdirSync(path)) {
      const entry = join(path, name)
      const stat = statSync(entry, { throwIfNoEntry: false })
      if (!stat) continue
      if (stat.isDirectory()) walk(entry)
      else if (/\.(jsonl|sending)$/.test(name)) bytes += stat.size
    }
  }
  for (const folder of folders) if (existsSync(folder)) walk(folder)
  return bytes
}

const started = performance.now()
const instances = await Promise.all(Array.from({ length: Number(sessionCount) }, (_, n) => playSession(n)))
const played = performance.now() - started
const deadline = Date.now() + Number(settleSeconds) * 1000
while (outboxBacklog() > 0 && Date.now() < deadline) {
  // An older plugin sends its outbox only after a call that succeeds: give it one.
  await instances[0]["tool.execute.before"]?.({ tool: "noop", sessionID: "ses_settle", callID: id("call") }, { args: {} })
  await new Promise((resolve) => setTimeout(resolve, 500))
}
await Promise.all(instances.map((hooks) => hooks.dispose?.()))
const all = Object.values(times).flat().sort((a, b) => a - b)
const pick = (list, q) => (list.length ? list[Math.min(list.length - 1, Math.floor(q * list.length))] : 0)
const perHook = Object.fromEntries(
  Object.entries(times).map(([name, list]) => {
    list.sort((a, b) => a - b)
    return [name, { n: list.length, p50_ms: pick(list, 0.5), p99_ms: pick(list, 0.99), max_ms: list.at(-1) }]
  }),
)
const result = {
  sessions: Number(sessionCount),
  hooks_per_session: Number(hookCount),
  hooks: all.length,
  played_s: played / 1000,
  settled_s: (performance.now() - started - played) / 1000,
  outbox_bytes_left: outboxBacklog(),
  p50_ms: pick(all, 0.5),
  p99_ms: pick(all, 0.99),
  max_ms: all.at(-1) ?? 0,
  per_hook: perHook,
  transforms,
  enveloped,
  first_enveloped: firstEnveloped,
  errors,
  answered_by: answeredBy,
  prompts,
}
writeFileSync(outPath, JSON.stringify(result))
process.exit(0)
