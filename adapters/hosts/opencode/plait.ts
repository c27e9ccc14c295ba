/**
 * plait for OpenCode: forwards hooks to plait's local service and applies what it returns.
 *
 * Contract (see adapters/hosts/http/service.py):
 * - service URL: env PLAIT_URL (or several, comma-separated: replicas tried in turn, starting
 *                at one picked by the first session's id, so sessions spread), else
 *                `url` in <dataDir>/services/<projectKey>.json
 * - token:       env PLAIT_TOKEN, else <dataDir>/token
 * - dataDir:     env PLAIT_DATA_DIR, else `dataDir` of a plait.json (below), else the
 *                platform's user data dir + "/plait"
 * - plait.json:  user-level settings, never machine paths in a project: `../plait.json` beside
 *                the plugin folder when that is OpenCode's user config dir (global install),
 *                else $XDG_CONFIG_HOME/opencode/plait.json; {"dataDir"?, "serve"?: [...]}
 * - projectKey:  first 16 hex digits of sha256(realpath(project dir))
 * Every call gives up after 250 ms (PLAIT_TIMEOUT_MS) and OpenCode goes on (fail open).
 * Hooks that record something (event, chat.message, tool.execute.after) carry a `call_id`
 * (a random UUID, the same on every resend: the service records a call once). Such a call is
 * delivered when the service answers 200 with `X-Plait-Kept: stored|spooled` (or a service
 * too old to say); otherwise (503 `X-Plait-Kept: none`, a timeout, no service) it is appended
 * to an outbox (<dataDir>/outbox/<projectKey>.jsonl) and sent again later, in order, in
 * batches under PLAIT_BATCH_BYTES (1 MiB); while the outbox holds calls of a session, that
 * session's new ones queue behind them, so its calls keep their order (other sessions' calls
 * still go straight to the service). A call the service refuses (4xx: it
 * dead-letters it, `plait dlq`) or one too large for any batch is dropped, never retried
 * forever, and noted in <outbox>.dropped. The outbox keeps each call's name and payload sealed
 * (AES-256-GCM, the call id as associated data) with the key in <dataDir>/outbox/sealing.key
 * (0600, made by the first plugin that keeps a call): payloads hold what the user typed and
 * tools printed, and plait's redaction runs in the service only. The service reads the same key
 * to send what plugins left. When the service is unreachable the plugin
 * starts `plait serve` detached (PLAIT_SERVE_COMMAND, else plait.json `serve`, else `plait
 * serve` found through PATH), and it does so once when it loads, so the service is up by the
 * first model call. A model call while that service is still starting waits for it (at most
 * PLAIT_START_WAIT_MS, 5 s; not once it has exited), sends what waits in the outbox, then asks:
 * the first model call of a cold start carries memory too.
 * Calls of plait's own MCP tools (`plait_*`) get the OpenCode session as `session_id`, so the
 * tools act in the session that called them. A policy answer of `nudge` or `redirect` is
 * appended to that tool call's output; `deny` fails the call with the message.
 * A compaction gets the envelope once: at the end of its prompt (session.compacting), never
 * also inside the conversation it summarizes.
 */
import type { Hooks, Plugin, PluginInput } from "@opencode-ai/plugin"
import { spawn } from "node:child_process"
import { createCipheriv, createDecipheriv, createHash, randomBytes, randomUUID } from "node:crypto"
import {
  appendFileSync,
  existsSync,
  linkSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  statSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs"
import { homedir, platform } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

type Json = Record<string, any>

const TIMEOUT_MS = Number(process.env.PLAIT_TIMEOUT_MS ?? 250)
const FLUSH_TIMEOUT_MS = 5_000
const FLUSH_BATCH = 200
const BATCH_MAX_BYTES = Number(process.env.PLAIT_BATCH_BYTES ?? 1024 * 1024)
const RETRY_MS = 1_000
const FLUSH_LOCK_STALE_MS = 30_000
const KEPT_HEADER = "x-plait-kept"
const REASON_HEADER = "x-plait-reason" // the service failed open, and says why
const OFFLINE_BACKOFF_MS = 2_000
// How often the outbox is sent while calls wait in it, whether or not OpenCode calls a hook.
const OUTBOX_FLUSH_MS = 1_000
// how long a session's recording calls wait for the replica that holds its earlier calls in its
// spool (it answered "spooled", then stopped answering) before they go to another replica
const HOLD_MS = Number(process.env.PLAIT_HOLD_MS ?? 60_000)
const SPAWN_INTERVAL_MS = 30_000
// A model call right after the plugin started `plait serve` waits for it this long at most, so
// the first model call of a cold start carries memory (the service's start is about 1 s)
const START_WAIT_MS = Number(process.env.PLAIT_START_WAIT_MS ?? 5_000)
// A session's first model call is where its long-term memory matters most: while the service
// is behind with the session's first calls (many sessions starting at once), it asks again for
// this long at most. Later model calls take what the service has at once.
const FIRST_CALL_WAIT_MS = Number(process.env.PLAIT_FIRST_CALL_WAIT_MS ?? 1_000)
const OUTBOX_MAX_BYTES = 64 * 1024 * 1024
// An outbox larger than this is not read to tell its sessions apart: every session waits behind it
const SCAN_MAX_BYTES = 1024 * 1024
const SEALING_KEY = "sealing.key"
const SEAL = "aes-256-gcm"
const NONCE_BYTES = 12
const TAG_BYTES = 16
const MCP_PREFIX = "plait_"
const NOTES_KEPT = 256
// plait serve keeps the last envelope each session got; it stands in while no service answers
const STANDBY_DIR = "answers"
const STANDBY_MAX_AGE_MS = 7 * 24 * 3600 * 1000
const ENVELOPE_PART = "prt_plait_"
const TRANSFORM = "experimental.chat.messages.transform"
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

/**
 * Whether plait can read anything out of a bus event. Most of what OpenCode publishes is a
 * session's or a message's times and counts, or a part that is still streaming or running: the
 * service reads no intent out of those (`session_updated`, `message_updated` and `part_updated`
 * in adapters/hosts/opencode/hooks.py), so they are not sent. What is sent may still say nothing.
 */
function carries(event: Json): boolean {
  const properties = event.properties ?? {}
  if (event.type === "session.updated") return Boolean(properties.info?.parentID) // links a subagent's
  if (event.type === "message.updated") {
    return properties.info?.role === "assistant" && Boolean(properties.info?.summary)
  }
  if (event.type !== "message.part.updated") return true
  const part = properties.part ?? {}
  if (part.type === "tool") return part.state?.status === "error"
  return part.type === "text" && Boolean(part.time?.end) && !part.synthetic
}

type Settings = { dataDir: string; serve: string[] }
/**
 * A hook call as the outbox keeps it (one JSON line each); `to`: the listed replica the plugin
 * was sending to, which gets it first (a session stays in one replica's order).
 */
type Call = { name: string; input: Json; output: Json; call_id: string; to?: string }

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
  private turn = -1 // the next listed service URL to try (first: picked by the session's id)
  private misses = 0 // listed services that failed in a row
  private lastSpawn = 0
  private started?: { at: number; exited: boolean } // the `plait serve` this plugin started
  private flushRun?: Promise<void>
  private readonly failedOpenAnswers = new WeakSet<Json>() // answers given without running
  private retryAt = 0
  private batchBytes = BATCH_MAX_BYTES
  private holdAt?: string // a replica that answered "spooled" and has not caught up since
  private holdSince = 0 // when it stopped answering
  // session → its last call in the outbox (id, and the inode of the outbox file it went to): its
  // next calls queue behind it
  private readonly waiting = new Map<string, { id: string; ino: number }>()
  private waitAll = false // an outbox too large to read at load: every session waits until it goes
  readonly outbox: string
  readonly key: string
  private sealWith?: Buffer

  constructor(
    readonly project: string,
    readonly settings: Settings,
  ) {
    this.key = projectKey(project)
    this.outbox = join(settings.dataDir, "outbox", `${this.key}.jsonl`)
    // calls an earlier process of a session left in the outbox go before its new ones
    if (this.outboxBytes() > SCAN_MAX_BYTES) this.waitAll = true
    else
      for (const line of this.outboxLines()) {
        const call = readCall(line, this.sealingKey())
        if (call) this.waiting.set(sessionOf(call.input), { id: call.call_id, ino: -1 })
      }
  }

  /** PLAIT_URL: one service URL, or several (replicas of a shared service), comma-separated. */
  private listed(): string[] {
    return (process.env.PLAIT_URL ?? "").split(",").map((url) => url.trim()).filter(Boolean)
  }

  private locate(session = ""): boolean {
    const listed = this.listed()
    if (this.turn < 0) this.turn = spread(session)
    this.url = listed.length
      ? listed[this.turn++ % listed.length]
      : readJson(join(this.settings.dataDir, "services", `${this.key}.json`))?.url
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
  async call(name: string, input: Json, output: Json, callId?: string): Promise<Json | undefined> {
    const call: Call = { name, input, output, call_id: callId ?? randomUUID() }
    if (DURABLE.has(name) && (this.waitsInOutbox(sessionOf(input)) || this.holding())) {
      this.keep(call) // behind what waits already: a session's calls keep their order
      void this.flush()
      return undefined
    }
    if (Date.now() < this.offlineUntil || (!this.url && !this.locate(sessionOf(input)))) {
      this.undelivered(call)
      return undefined
    }
    try {
      const body = DURABLE.has(name) ? { input, output, call_id: call.call_id } : { input, output }
      const response = await this.post(`/v1/hooks/${name}`, body, TIMEOUT_MS)
      if (response.status === 401) this.url = undefined
      if (response.status >= 500 || response.status === 401) {
        if (response.status === 503) this.retryAt = Date.now() + retryAfter(response)
        if (DURABLE.has(name)) this.keep(call)
        return undefined
      }
      if (response.status !== 200) {
        if (DURABLE.has(name)) this.dropped(call, `status ${response.status}`)
        return undefined
      }
      const kept = response.headers.get(KEPT_HEADER)
      if (DURABLE.has(name) && kept === "none") this.keep(call)
      if (DURABLE.has(name) && kept === "spooled" && this.listed().length > 1) this.holdAt = this.url
      if (DURABLE.has(name) && kept === "stored" && this.url === this.holdAt) this.holdAt = undefined
      const answer = (await response.json()) as Json
      if (isObject(answer) && response.headers.has(REASON_HEADER)) this.failedOpenAnswers.add(answer)
      this.offlineUntil = 0
      this.misses = 0
      void this.flush()
      return answer
    } catch (error) {
      if ((error as Error)?.name !== "TimeoutError") this.unreachable()
      this.undelivered(call)
      return undefined
    }
  }

  /**
   * The service did not answer: find it again before the next call (its service file may name a
   * new port, or the next listed replica answers); pause once every listed one failed in a row.
   */
  private unreachable(): void {
    if (this.holdAt && this.url === this.holdAt) this.holdSince = Date.now()
    this.url = undefined
    if (++this.misses >= this.listed().length) {
      this.misses = 0
      this.offlineUntil = Date.now() + OFFLINE_BACKOFF_MS
    }
  }

  /**
   * Whether recording calls wait for the replica that holds this session's earlier calls in its
   * spool: it answered "spooled" and then stopped answering. Stored elsewhere meanwhile, they
   * would come before the calls that replica records when it is back; after HOLD_MS they go on
   * to another replica all the same (a replica that stays away must not stop the session).
   */
  private holding(): boolean {
    if (!this.holdAt || this.url === this.holdAt) return false
    if (this.holdSince && Date.now() - this.holdSince > HOLD_MS) this.holdAt = undefined
    return this.holdAt !== undefined
  }

  /**
   * Post calls kept for replica `to` to it while it is listed, so that they reach the replica
   * that may still hold their session's earlier calls; to this plugin's service when there is
   * none or it cannot be reached (gone: its sessions move on), unless the session is held for it.
   */
  private async postBatch(calls: Call[], to: string | undefined): Promise<Response> {
    const body = { calls: calls.map(({ name, input, output, call_id }) => ({ name, input, output, call_id })) }
    if (to && to !== this.url && this.listed().includes(to)) {
      try {
        return await this.post("/v1/hooks", body, FLUSH_TIMEOUT_MS, to)
      } catch (error) {
        if ((error as Error)?.name === "TimeoutError") throw error
        if (to === this.holdAt && this.holding()) throw error // wait for it, in order
      }
    }
    return this.post("/v1/hooks", body, FLUSH_TIMEOUT_MS)
  }

  private post(path: string, body: unknown, timeoutMs: number, url = this.url): Promise<Response> {
    return fetch(`${url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${this.token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    })
  }

  private undelivered(call: Call): void {
    if (DURABLE.has(call.name)) this.keep(call)
    this.startService()
  }

  /** Whether the service gave this answer without running the call (it said why). */
  failedOpen(answer: Json): boolean {
    return this.failedOpenAnswers.has(answer)
  }

  /** Whether calls wait in the outbox (or in the batch being sent). */
  backlog(): boolean {
    return existsSync(this.outbox) || existsSync(`${this.outbox}.sending`)
  }

  /**
   * Whether a call of `session` kept earlier still waits in the outbox (or in the batch being
   * sent): the other sessions' calls do not wait behind it. Cheap while the outbox file it went
   * to is still there (the same inode: no flusher took it); else the files are read, unless
   * they are larger than SCAN_MAX_BYTES (then the session waits while anything does).
   */
  private waitsInOutbox(session: string): boolean {
    if (this.waitAll) {
      if (this.backlog()) return true
      this.waitAll = false
    }
    const last = this.waiting.get(session)
    if (last === undefined) return false
    if (last.ino >= 0 && inodeOf(this.outbox) === last.ino) return true
    if (this.outboxBytes() > SCAN_MAX_BYTES) return this.backlog()
    if (this.outboxLines().some((line) => line.includes(last.id))) return true
    this.waiting.delete(session)
    return false
  }

  /** The bytes waiting in the outbox and the batch being sent. */
  private outboxBytes(): number {
    let bytes = 0
    for (const path of [this.outbox, `${this.outbox}.sending`]) {
      try {
        bytes += statSync(path).size
      } catch {}
    }
    return bytes
  }

  /**
   * The lines waiting, the outbox's then the batch being sent (read in that order: a flusher
   * that moves the outbox to the batch in between is seen in the second read).
   */
  private outboxLines(): string[] {
    const lines: string[] = []
    for (const path of [this.outbox, `${this.outbox}.sending`]) {
      try {
        lines.push(...readFileSync(path, "utf8").split("\n").filter(Boolean))
      } catch {}
    }
    return lines
  }

  /**
   * Append one call to the outbox file (synchronous, so nothing is lost on exit), noting the
   * replica this plugin sends to when several are listed.
   */
  keep(call: Json): void {
    if (this.holding()) {
      call = { ...call, to: this.holdAt }
    } else if (this.listed().length > 1 && (this.url || this.locate(sessionOf(call.input)))) {
      call = { ...call, to: this.url }
    }
    try {
      mkdirSync(dirname(this.outbox), { recursive: true, mode: 0o700 })
      const key = this.sealingKey()
      const line = key ? sealed(call as Call, key) : call // no key (a read-only folder): as it came
      appendFileSync(this.outbox, JSON.stringify(line) + "\n", { mode: 0o600 })
      this.waiting.set(sessionOf(call.input), { id: String(call.call_id), ino: inodeOf(this.outbox) })
    } catch {}
  }

  /** Note a call that is given up (refused by the service, or too large to send). */
  dropped(call: Json | string, reason: string): void {
    const parsed = typeof call === "string" ? readCall(call, this.sealingKey()) : call
    const note = { at: new Date().toISOString(), name: parsed?.name, call_id: parsed?.call_id, reason }
    try {
      appendFileSync(`${this.outbox}.dropped`, JSON.stringify(note) + "\n", { mode: 0o600 })
    } catch {}
  }

  /**
   * Send the outbox in order, in batches; what is not confirmed stays for the next time. A flush
   * already under way is the one awaited.
   */
  flush(): Promise<void> {
    this.flushRun ??= this.flushOnce().finally(() => (this.flushRun = undefined))
    return this.flushRun
  }

  private async flushOnce(): Promise<void> {
    if (Date.now() < this.retryAt || Date.now() < this.offlineUntil) return
    if (!this.url && !this.locate()) return
    const lock = this.claim()
    if (lock === undefined) return
    const sending = `${this.outbox}.sending`
    try {
      if (!existsSync(sending)) {
        if (!existsSync(this.outbox)) return
        renameSync(this.outbox, sending)
      }
      let lines = readFileSync(sending, "utf8").split("\n").filter(Boolean)
      while (lines.length > 0) {
        const done = await this.sendBatch(lines.slice(0, batchSize(lines, this.batchBytes)))
        if (done === undefined) return
        lines = lines.slice(done)
        // whole or not at all: a plugin reading the batch never sees it half written
        writeFileSync(`${sending}.tmp`, lines.length ? lines.join("\n") + "\n" : "", { mode: 0o600 })
        renameSync(`${sending}.tmp`, sending)
        utimesSync(`${this.outbox}.lock`, new Date(), new Date()) // still ours: not stale
        if (done === 0) return
      }
      unlinkSync(sending)
    } catch {
      // stays on disk (in the .sending file) and goes again after a pause; the service is found
      // again then, from its service file: it may have come back on another port
      this.unreachable()
    } finally {
      this.release(lock)
    }
  }

  /** The key the outbox's payloads are sealed with (made once, shared by the data dir's plugins). */
  private sealingKey(): Buffer | undefined {
    this.sealWith ??= sealingKey(dirname(this.outbox))
    return this.sealWith
  }

  /** Take `<outbox>.lock` (the plugins of one project share the outbox): its token, or none. */
  private claim(): string | undefined {
    const lock = `${this.outbox}.lock`
    const token = randomUUID()
    try {
      mkdirSync(dirname(this.outbox), { recursive: true, mode: 0o700 })
      writeFileSync(lock, token, { flag: "wx", mode: 0o600 })
      return token
    } catch {
      try {
        if (Date.now() - statSync(lock).mtimeMs > FLUSH_LOCK_STALE_MS) unlinkSync(lock) // holder died
      } catch {}
      return undefined
    }
  }

  private release(token: string): void {
    const lock = `${this.outbox}.lock`
    try {
      if (readFileSync(lock, "utf8") === token) unlinkSync(lock)
    } catch {}
  }

  /**
   * Post one batch: the leading calls kept for one replica; how many leading lines are done
   * with (undefined: none, try later).
   */
  private async sendBatch(lines: string[]): Promise<number | undefined> {
    const key = this.sealingKey()
    const calls = lines.map((line) => readCall(line, key))
    if (calls[0] === undefined) {
      this.dropped(lines[0], "not a call (not JSON, or sealed with a key that is gone)")
      return 1
    }
    const broken = calls.indexOf(undefined)
    let valid = (broken === -1 ? calls : calls.slice(0, broken)) as Call[]
    const other = valid.findIndex((call) => call.to !== valid[0].to)
    if (other > 0) valid = valid.slice(0, other)
    const response = await this.postBatch(valid, valid[0].to)
    if (response.status === 413 && valid.length === 1) {
      this.dropped(lines[0], "larger than the service's body limit")
      return 1
    }
    if (response.status === 413) {
      // the service's limit is lower than ours: halve the batches until they fit
      this.batchBytes = Math.max(1, Math.floor(Buffer.byteLength(lines.slice(0, valid.length).join("\n")) / 2))
      return this.sendBatch(lines.slice(0, Math.ceil(valid.length / 2)))
    }
    if (response.status !== 200) {
      if (response.status === 503) this.retryAt = Date.now() + retryAfter(response)
      return undefined
    }
    const results: Json[] = ((await response.json()) as Json).results ?? []
    let done = 0
    for (const [index, result] of results.entries()) {
      const status = Number(result?.status)
      if (status >= 500 || !(status >= 200)) break // not kept: it and what follows go again
      if (status >= 400) this.dropped(valid[index], `status ${status}: ${result?.error ?? ""}`)
      done += 1
    }
    if (done < valid.length) this.retryAt = Date.now() + RETRY_MS
    if (valid[0].to === this.holdAt && results.every((result) => result?.kept === "stored")) {
      this.holdAt = undefined // the replica has recorded the session's calls: they may go anywhere
    }
    return done
  }

  /**
   * The envelope the service last gave this session, else the project's part of the last one it
   * gave any session (a new session's first call), if fresh (plait.state.base.standby).
   */
  standby(session: string, name: string): string | undefined {
    for (const who of [session, ""]) {
      const digest = createHash("sha256").update(`opencode\n${who}\n${name}`, "utf8").digest("hex")
      const path = join(this.settings.dataDir, STANDBY_DIR, this.key, `${digest.slice(0, 32)}.json`)
      try {
        if (Date.now() - statSync(path).mtimeMs > STANDBY_MAX_AGE_MS) continue
        const kept = readFileSync(path, "utf8")
        if (kept) return kept
      } catch {
        continue
      }
    }
    return undefined
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
      const started = { at: Date.now(), exited: false }
      child.on("error", () => (started.exited = true))
      child.on("exit", () => (started.exited = true))
      child.unref()
      this.started = started
    } catch {}
  }

  /**
   * If this plugin started `plait serve` moments ago, wait until it answers (at most
   * START_WAIT_MS after the start; not once it exited without answering), then send what waits in
   * the outbox, so a model call finds its session's calls recorded. The time until which the
   * model call may ask again while the new service is still behind (0: it need not).
   */
  async untilStarted(): Promise<number> {
    const started = this.started
    if (!started) return 0
    const deadline = started.at + START_WAIT_MS
    while (Date.now() < deadline) {
      const exited = started.exited
      if (this.locate() && (await this.answers())) {
        this.started = undefined
        this.offlineUntil = 0
        for (let round = 0; round < 3 && this.backlog() && Date.now() < deadline; round++) {
          await this.flush()
        }
        return deadline
      }
      if (exited) break // it ended (or handed the project to a running process that answers)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    this.started = undefined
    return 0
  }

  /** Whether the service found answers its health check. */
  private async answers(): Promise<boolean> {
    try {
      const response = await fetch(`${this.url}/v1/health`, { signal: AbortSignal.timeout(500) })
      return response.ok
    } catch {
      return false
    }
  }
}

/**
 * Where a client starts in the list of replicas: the first 32 bits of its session id's SHA-256,
 * so one session goes to the same replica each time and sessions spread over the list.
 */
function spread(session: string): number {
  return parseInt(createHash("sha256").update(session, "utf8").digest("hex").slice(0, 8), 16)
}

/** The OpenCode session a hook call belongs to, when its input names one ("" otherwise). */
function sessionOf(input: Json): string {
  const properties = input?.event?.properties
  const session = input?.sessionID ?? properties?.sessionID ?? properties?.info?.id ?? properties?.part?.sessionID
  return typeof session === "string" ? session : ""
}

/** A file's inode number, or -1 when it is not there. */
function inodeOf(path: string): number {
  try {
    return statSync(path).ino
  } catch {
    return -1
  }
}

/**
 * The key in `folder`/sealing.key, made when there is none: written whole to a file of its own,
 * then linked into place, so two plugins making it at once agree on the one that landed.
 */
function sealingKey(folder: string): Buffer | undefined {
  const path = join(folder, SEALING_KEY)
  if (!existsSync(path)) {
    const spare = join(folder, `${SEALING_KEY}.${randomUUID()}`)
    try {
      mkdirSync(folder, { recursive: true, mode: 0o700 })
      writeFileSync(spare, randomBytes(32).toString("base64"), { flag: "wx", mode: 0o600 })
      linkSync(spare, path)
    } catch {
    } finally {
      try {
        unlinkSync(spare)
      } catch {}
    }
  }
  try {
    const key = Buffer.from(readFileSync(path, "utf8").trim(), "base64")
    return key.length === 32 ? key : undefined
  } catch {
    return undefined
  }
}

/** A call as the outbox keeps it: the id (and replica) in the clear, the rest sealed. */
function sealed(call: Call, key: Buffer): Json {
  const nonce = randomBytes(NONCE_BYTES)
  const cipher = createCipheriv(SEAL, key, nonce)
  cipher.setAAD(Buffer.from(String(call.call_id ?? ""), "utf8")) // a line without an id: ""
  const body = JSON.stringify({ name: call.name, input: call.input, output: call.output })
  const text = Buffer.concat([cipher.update(body, "utf8"), cipher.final()])
  const line: Json = {
    call_id: call.call_id,
    sealed: Buffer.concat([nonce, text, cipher.getAuthTag()]).toString("base64"),
  }
  if (call.to) line.to = call.to
  return line
}

/** A sealed outbox line opened (undefined when the key cannot open it); others as they are. */
function unsealed(line: Json, key: Buffer | undefined): Json | undefined {
  if (typeof line.sealed !== "string") return line
  if (key === undefined) return undefined
  try {
    const raw = Buffer.from(line.sealed, "base64")
    const decipher = createDecipheriv(SEAL, key, raw.subarray(0, NONCE_BYTES))
    decipher.setAAD(Buffer.from(String(line.call_id ?? ""), "utf8"))
    decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES))
    const text = Buffer.concat([decipher.update(raw.subarray(NONCE_BYTES, raw.length - TAG_BYTES)), decipher.final()])
    const call = JSON.parse(text.toString("utf8"))
    if (!isObject(call)) return undefined
    return { ...call, call_id: line.call_id, ...(line.to ? { to: line.to } : {}) }
  } catch {
    return undefined
  }
}

/** One outbox line as a call (an older line without an id gets one from its text). */
function readCall(line: string, key: Buffer | undefined): Call | undefined {
  try {
    const call = unsealed(JSON.parse(line), key)
    if (!isObject(call)) return undefined
    if (typeof call.call_id !== "string" || !call.call_id) {
      call.call_id = createHash("sha256").update(line, "utf8").digest("hex").slice(0, 32)
    }
    return call as Call
  } catch {
    return undefined
  }
}

/** How many leading lines fit one batch: at most FLUSH_BATCH and `maxBytes` (at least one). */
function batchSize(lines: string[], maxBytes: number): number {
  let bytes = 0
  let count = 0
  for (const line of lines.slice(0, FLUSH_BATCH)) {
    bytes += Buffer.byteLength(line) + 1
    if (count > 0 && bytes > maxBytes) break
    count += 1
  }
  return count
}

/** A 503's Retry-After, in ms (RETRY_MS when it has none). */
function retryAfter(response: Response): number {
  const seconds = Number(response.headers.get("retry-after"))
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : RETRY_MS
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

// every plugin instance's event queue, spilled by one exit listener (a process may load many)
const QUEUES = new Set<EventQueue>()
process.once("exit", () => QUEUES.forEach((queue) => queue.spill()))

/** Events in flight, delivered in order off OpenCode's path; kept on disk if the process exits. */
class EventQueue {
  private pending: Call[] = []
  private chain: Promise<void> = Promise.resolve()

  constructor(private readonly client: PlaitClient) {
    QUEUES.add(this)
  }

  push(event: Json): void {
    const call: Call = { name: "event", input: { event }, output: {}, call_id: randomUUID() }
    this.pending.push(call)
    this.chain = this.chain.then(async () => {
      await this.client.call("event", call.input, call.output, call.call_id)
      this.pending = this.pending.filter((item) => item !== call)
    })
  }

  drain(): Promise<void> {
    return this.chain
  }

  spill(): void {
    for (const call of this.pending) this.client.keep(call)
    this.pending = []
  }
}

/** What the plugin remembers between hooks of one call or one compaction. */
class CallNotes {
  private notes = new Map<string, string>()
  private compacting = new Set<string>()
  private asked = new Set<string>() // sessions whose first model call came

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

  /** Whether this is the session's first model call here (true once per session). */
  firstModelCall(sessionID: unknown): boolean {
    if (typeof sessionID !== "string" || this.asked.has(sessionID)) return false
    this.asked.add(sessionID)
    if (this.asked.size > NOTES_KEPT) this.asked.delete(this.asked.values().next().value as string)
    return true
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

/** Whether the service's answer to a transform put an envelope in the message. */
function enveloped(returned: Json | undefined): boolean {
  const parts = returned?.messages?.[0]?.parts
  return Array.isArray(parts) && parts.some((part: Json) => String(part?.id ?? "").startsWith(ENVELOPE_PART))
}

/** No service answered: put the session's standby envelope first, as the service would. */
function standIn(last: Json, envelope: string | undefined): void {
  if (!envelope || !Array.isArray(last.parts)) return
  if (last.parts.some((part: Json) => String(part?.id ?? "").startsWith(ENVELOPE_PART))) return
  const messageID = String(last.info?.id ?? "")
  last.parts.unshift({
    id: `${ENVELOPE_PART}${messageID}`,
    sessionID: String(last.info?.sessionID ?? ""),
    messageID,
    type: "text",
    text: envelope,
    synthetic: true,
  })
}

const PlaitPlugin: Plugin = async (input) => {
  const project = projectDir(input)
  const client = new PlaitClient(project, pluginSettings(project))
  const events = new EventQueue(client)
  const notes = new CallNotes()
  client.warmUp()
  // what waits in the outbox goes as soon as the service answers, not with the next hook call
  const flusher = setInterval(() => {
    if (client.backlog()) void client.flush()
  }, OUTBOX_FLUSH_MS)
  flusher.unref?.()

  const hooks: Hooks = {
    dispose: async () => {
      clearInterval(flusher)
      await Promise.race([events.drain(), new Promise((resolve) => setTimeout(resolve, 1_000))])
    },
    event: async ({ event }) => {
      if (EVENT_TYPES.has(event.type) && carries(event as Json)) events.push(event as Json)
    },
    "chat.message": async (hookInput, output) => {
      const returned = await client.call("chat.message", hookInput as Json, output as Json)
      if (returned) mergeInto(output, returned)
    },
    "experimental.chat.messages.transform": async (hookInput, output) => {
      const last = lastUserMessage(output as Json)
      if (!last || notes.isCompacting(output as Json)) return
      const first = notes.firstModelCall(last.info?.sessionID)
      const starting = await client.untilStarted()
      const until = Math.max(starting, first ? Date.now() + FIRST_CALL_WAIT_MS : 0)
      // a service that has just started runs its first calls slowly, and a session's first turn
      // may wait behind other sessions' first turns: until then, ask again while it is behind
      // (it answered without running the call, or not in time)
      let returned: Json | undefined
      for (;;) {
        const asked = Date.now()
        returned = await client.call(TRANSFORM, hookInput as Json, { messages: [last] })
        const behind = returned ? client.failedOpen(returned) : Date.now() - asked >= TIMEOUT_MS
        if (!behind || enveloped(returned) || Date.now() >= until) break
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
      const message = returned?.messages?.[0]
      if (message) mergeInto(last, message)
      else if (!returned) standIn(last, client.standby(String(last.info?.sessionID ?? ""), TRANSFORM))
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
