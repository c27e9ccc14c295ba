/**
 * plait for OpenCode: forwards hooks to plait's local service and applies what it returns.
 *
 * Contract (see adapters/hosts/http/service.py):
 * - service URL: env PLAIT_URL, else `url` in <dataDir>/services/<projectKey>.json
 * - token:       env PLAIT_TOKEN, else <dataDir>/token
 * - dataDir:     env PLAIT_DATA_DIR, else `dataDir` of a plait.json (below), else the
 *                platform's user data dir + "/plait"
 * - plait.json:  user-level settings, never machine paths in a project: `../plait.json` beside
 *                the plugin folder when that is OpenCode's user config dir (global install),
 *                else $XDG_CONFIG_HOME/opencode/plait.json; {"dataDir"?, "serve"?: [...]}
 * - projectKey:  first 16 hex digits of sha256(realpath(project dir))
 * Every call gives up after 250 ms (PLAIT_TIMEOUT_MS) and OpenCode goes on (fail open).
 * Hooks that record something (event, chat.message, tool.execute.after) are appended to an
 * outbox (<dataDir>/outbox/<projectKey>.jsonl) when they cannot be delivered and are sent,
 * in order, after the next successful call. When the service is unreachable the plugin
 * starts `plait serve` detached (PLAIT_SERVE_COMMAND, else plait.json `serve`, else `plait
 * serve` found through PATH), and it does so once when it loads, so the service is up by the
 * first model call.
 * Calls of plait's own MCP tools (`plait_*`) get the OpenCode session as `session_id`, so the
 * tools act in the session that called them. A policy answer of `nudge` or `redirect` is
 * appended to that tool call's output; `deny` fails the call with the message.
 * A compaction gets the envelope once: at the end of its prompt (session.compacting), never
 * also inside the conversation it summarizes.
 */
import type { Hooks, Plugin, PluginInput } from "@opencode-ai/plugin"
import { spawn } from "node:child_process"
import { createHash } from "node:crypto"
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  unlinkSync,
  writeFileSync,
} from "node:fs"
import { homedir, platform } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

type Json = Record<string, any>

const TIMEOUT_MS = Number(process.env.PLAIT_TIMEOUT_MS ?? 250)
const FLUSH_TIMEOUT_MS = 5_000
const FLUSH_BATCH = 200
const OFFLINE_BACKOFF_MS = 2_000
const SPAWN_INTERVAL_MS = 30_000
const OUTBOX_MAX_BYTES = 64 * 1024 * 1024
const MCP_PREFIX = "plait_"
const NOTES_KEPT = 256
const DURABLE = new Set(["event", "chat.message", "tool.execute.after"])
const EVENT_TYPES = new Set([
  "session.created",
  "session.updated",
  "session.deleted",
  "session.idle",
  "session.compacted",
  "session.error",
  "message.updated",
  "message.part.updated",
  "todo.updated",
  "file.edited",
  "vcs.branch.updated",
  "command.executed",
])

type Settings = { dataDir: string; serve: string[] }

function readJson(path: string): Json | undefined {
  try {
    return JSON.parse(readFileSync(path, "utf8"))
  } catch {
    return undefined
  }
}

function defaultDataDir(): string {
  const home = homedir()
  if (platform() === "darwin") return join(home, "Library", "Application Support", "plait")
  if (platform() === "win32") return join(process.env.LOCALAPPDATA ?? join(home, "AppData", "Local"), "plait")
  return join(process.env.XDG_DATA_HOME || join(home, ".local", "share"), "plait")
}

function serveCommand(file: Json): string[] {
  try {
    const fromEnv = process.env.PLAIT_SERVE_COMMAND ? JSON.parse(process.env.PLAIT_SERVE_COMMAND) : undefined
    const command = fromEnv ?? file.serve
    if (Array.isArray(command) && command.length > 0) return command.map(String)
  } catch {}
  return ["plait", "serve"]
}

function userConfigDir(): string {
  return join(process.env.XDG_CONFIG_HOME || join(homedir(), ".config"), "opencode")
}

function pluginSettings(project: string): Settings {
  const here = dirname(fileURLToPath(import.meta.url))
  const file = readJson(join(here, "..", "plait.json")) ?? readJson(join(userConfigDir(), "plait.json")) ?? {}
  const dataDir = process.env.PLAIT_DATA_DIR || file.dataDir || defaultDataDir()
  return { dataDir, serve: [...serveCommand(file), "--project", project] }
}

function projectKey(project: string): string {
  let real = project
  try {
    real = realpathSync(project)
  } catch {}
  return createHash("sha256").update(real, "utf8").digest("hex").slice(0, 16)
}

/** Copy `source` into `target` in place, keeping object identity where ids (or indexes) match. */
function mergeInto(target: any, source: any): any {
  if (Array.isArray(target) && Array.isArray(source)) {
    const byId = new Map<string, any>()
    for (const item of target) {
      const id = item?.id ?? item?.info?.id
      if (id !== undefined) byId.set(id, item)
    }
    const used = new Set<any>()
    const merged = source.map((item: any, index: number) => {
      const id = item?.id ?? item?.info?.id
      const candidate = id !== undefined ? byId.get(id) : target[index]
      const sameKind = id !== undefined || (candidate?.id ?? candidate?.info?.id) === undefined
      const previous = sameKind && !used.has(candidate) ? candidate : undefined
      if (!isObject(previous) || !isObject(item)) return item
      used.add(previous)
      return mergeInto(previous, item)
    })
    target.splice(0, target.length, ...merged)
    return target
  }
  if (isObject(target) && isObject(source)) {
    for (const key of Object.keys(target)) if (!(key in source)) delete target[key]
    for (const [key, value] of Object.entries(source)) {
      const previous = target[key]
      const nested = (isObject(previous) && isObject(value)) || (Array.isArray(previous) && Array.isArray(value))
      target[key] = nested ? mergeInto(previous, value) : value
    }
    return target
  }
  return source
}

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value)
}

/** The slice of a transform output the service needs: the last user message only. */
function lastUserMessage(output: Json): Json | undefined {
  const messages: any[] = Array.isArray(output?.messages) ? output.messages : []
  for (let index = messages.length - 1; index >= 0; index--) {
    if (messages[index]?.info?.role === "user") return messages[index]
  }
  return undefined
}

class PlaitClient {
  private url?: string
  private token?: string
  private offlineUntil = 0
  private lastSpawn = 0
  private flushing = false
  readonly outbox: string
  readonly key: string

  constructor(
    readonly project: string,
    readonly settings: Settings,
  ) {
    this.key = projectKey(project)
    this.outbox = join(settings.dataDir, "outbox", `${this.key}.jsonl`)
  }

  private locate(): boolean {
    this.url = process.env.PLAIT_URL || readJson(join(this.settings.dataDir, "services", `${this.key}.json`))?.url
    this.token = process.env.PLAIT_TOKEN
    if (!this.token) {
      try {
        this.token = readFileSync(join(this.settings.dataDir, "token"), "utf8").trim()
      } catch {
        this.token = undefined
      }
    }
    return Boolean(this.url && this.token)
  }

  /** Post one hook; the parsed response body, or undefined when it could not be delivered. */
  async call(name: string, input: Json, output: Json): Promise<Json | undefined> {
    if (Date.now() < this.offlineUntil || (!this.url && !this.locate())) {
      this.undelivered(name, input, output)
      return undefined
    }
    try {
      const response = await this.post(`/v1/hooks/${name}`, { input, output }, TIMEOUT_MS)
      if (response.status === 401) this.url = undefined
      if (response.status >= 500 || response.status === 401) throw new Error(`status ${response.status}`)
      if (response.status !== 200) return undefined
      const body = (await response.json()) as Json
      this.offlineUntil = 0
      void this.flush()
      return body
    } catch {
      this.url = undefined
      this.offlineUntil = Date.now() + OFFLINE_BACKOFF_MS
      this.undelivered(name, input, output)
      return undefined
    }
  }

  private post(path: string, body: unknown, timeoutMs: number): Promise<Response> {
    return fetch(`${this.url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${this.token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    })
  }

  private undelivered(name: string, input: Json, output: Json): void {
    if (DURABLE.has(name)) this.keep({ name, input, output })
    this.startService()
  }

  /** Append one call to the outbox file (synchronous, so nothing is lost on exit). */
  keep(call: Json): void {
    try {
      mkdirSync(dirname(this.outbox), { recursive: true, mode: 0o700 })
      appendFileSync(this.outbox, JSON.stringify(call) + "\n", { mode: 0o600 })
    } catch {}
  }

  /** Send the outbox in order, in batches; what is not confirmed stays for the next time. */
  async flush(): Promise<void> {
    if (this.flushing) return
    this.flushing = true
    const sending = `${this.outbox}.sending`
    try {
      if (!existsSync(sending)) {
        if (!existsSync(this.outbox)) return
        renameSync(this.outbox, sending)
      }
      let lines = readFileSync(sending, "utf8").split("\n").filter(Boolean)
      while (lines.length > 0) {
        const calls = lines.slice(0, FLUSH_BATCH).flatMap((line) => {
          try {
            return [JSON.parse(line)]
          } catch {
            return []
          }
        })
        const response = await this.post("/v1/hooks", { calls }, FLUSH_TIMEOUT_MS)
        if (response.status !== 200) return
        lines = lines.slice(FLUSH_BATCH)
        writeFileSync(sending, lines.length ? lines.join("\n") + "\n" : "", { mode: 0o600 })
      }
      unlinkSync(sending)
    } catch {
      // stays on disk; the next successful call tries again
    } finally {
      this.flushing = false
    }
  }

  /** Make sure the service runs by the time it is needed: start it now if it does not answer. */
  warmUp(): void {
    if (process.env.PLAIT_URL || process.env.PLAIT_NO_SPAWN) return
    if (!this.locate()) {
      this.startService()
      return
    }
    fetch(`${this.url}/v1/health`, { signal: AbortSignal.timeout(1_000) })
      .then((response) => {
        if (!response.ok) this.startService()
      })
      .catch(() => this.startService())
  }

  /** Start `plait serve` detached, at most once per interval. */
  startService(): void {
    if (process.env.PLAIT_URL || process.env.PLAIT_NO_SPAWN) return
    if (Date.now() - this.lastSpawn < SPAWN_INTERVAL_MS) return
    this.lastSpawn = Date.now()
    try {
      const [command, ...args] = this.settings.serve
      const child = spawn(command, args, { cwd: this.project, detached: true, stdio: "ignore" })
      child.on("error", () => {})
      child.unref()
    } catch {}
  }
}

function projectDir(input: PluginInput): string {
  return input.worktree && input.worktree !== "/" ? input.worktree : input.directory
}

/** Apply the service's answer to a tool call; a nudge's message is returned for the output. */
function applyPolicy(output: Json, returned: Json | undefined): string | undefined {
  const policy = returned?.plait
  if (!returned) return undefined
  delete returned.plait
  mergeInto(output, returned)
  if (policy?.action === "deny") throw new Error(policy.message || "plait: this tool call is denied")
  if ((policy?.action === "nudge" || policy?.action === "redirect") && policy.message) return String(policy.message)
  return undefined
}

/** plait's own MCP tools act in the OpenCode session that calls them. */
function giveSession(tool: unknown, sessionID: unknown, output: Json): void {
  if (typeof tool !== "string" || !tool.startsWith(MCP_PREFIX) || typeof sessionID !== "string") return
  if (!isObject(output.args)) output.args = {}
  output.args.session_id = sessionID
}

/** Events in flight, delivered in order off OpenCode's path; kept on disk if the process exits. */
class EventQueue {
  private pending: Json[] = []
  private chain: Promise<void> = Promise.resolve()

  constructor(private readonly client: PlaitClient) {
    process.once("exit", () => this.spill())
  }

  push(event: Json): void {
    const call = { name: "event", input: { event }, output: {} }
    this.pending.push(call)
    this.chain = this.chain.then(async () => {
      await this.client.call("event", call.input, call.output)
      this.pending = this.pending.filter((item) => item !== call)
    })
  }

  drain(): Promise<void> {
    return this.chain
  }

  private spill(): void {
    for (const call of this.pending) this.client.keep(call)
    this.pending = []
  }
}

/** What the plugin remembers between hooks of one call or one compaction. */
class CallNotes {
  private notes = new Map<string, string>()
  private compacting = new Set<string>()

  note(callID: unknown, message: string | undefined): void {
    if (typeof callID !== "string" || !message) return
    this.notes.set(callID, message)
    if (this.notes.size > NOTES_KEPT) this.notes.delete(this.notes.keys().next().value as string)
  }

  take(callID: unknown): string | undefined {
    if (typeof callID !== "string") return undefined
    const message = this.notes.get(callID)
    this.notes.delete(callID)
    return message
  }

  startCompacting(sessionID: unknown): void {
    if (typeof sessionID === "string") this.compacting.add(sessionID)
  }

  /** Whether this transform builds a compaction's conversation (true once per compaction). */
  isCompacting(output: Json): boolean {
    const sessionID = lastUserMessage(output)?.info?.sessionID
    return typeof sessionID === "string" && this.compacting.delete(sessionID)
  }
}

function appendNote(output: Json, note: string | undefined): void {
  if (!note) return
  const text = typeof output.output === "string" ? output.output : ""
  output.output = text ? `${text}\n\n${note}` : note
}

const PlaitPlugin: Plugin = async (input) => {
  const project = projectDir(input)
  const client = new PlaitClient(project, pluginSettings(project))
  const events = new EventQueue(client)
  const notes = new CallNotes()
  client.warmUp()

  const hooks: Hooks = {
    dispose: async () => {
      await Promise.race([events.drain(), new Promise((resolve) => setTimeout(resolve, 1_000))])
    },
    event: async ({ event }) => {
      if (EVENT_TYPES.has(event.type)) events.push(event as Json)
    },
    "chat.message": async (hookInput, output) => {
      const returned = await client.call("chat.message", hookInput as Json, output as Json)
      if (returned) mergeInto(output, returned)
    },
    "experimental.chat.messages.transform": async (hookInput, output) => {
      const last = lastUserMessage(output as Json)
      if (!last || notes.isCompacting(output as Json)) return
      const returned = await client.call("experimental.chat.messages.transform", hookInput as Json, {
        messages: [last],
      })
      const message = returned?.messages?.[0]
      if (message) mergeInto(last, message)
    },
    "experimental.session.compacting": async (hookInput, output) => {
      notes.startCompacting((hookInput as Json).sessionID)
      const returned = await client.call("experimental.session.compacting", hookInput as Json, output as Json)
      if (returned) mergeInto(output, returned)
    },
    "tool.execute.before": async (hookInput, output) => {
      giveSession(hookInput.tool, hookInput.sessionID, output as Json)
      const returned = await client.call("tool.execute.before", hookInput as Json, output as Json)
      notes.note(hookInput.callID, applyPolicy(output as Json, returned))
    },
    "tool.execute.after": async (hookInput, output) => {
      const returned = await client.call("tool.execute.after", hookInput as Json, output as Json)
      if (returned) mergeInto(output, returned)
      appendNote(output as Json, notes.take(hookInput.callID))
    },
  }
  return hooks
}

export default PlaitPlugin
