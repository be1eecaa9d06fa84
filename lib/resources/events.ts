import type { ServerResponse } from 'node:http'
import type { Answer, Context, RouteHandler } from '../http/context.ts'
import type { Change } from '../data/documents.ts'
import type { NodePath } from '../store/store.ts'
import { joinPath as displayPath } from '../path.ts'
import { changeLogOf, type LoggedChange } from '../data/changes.ts'
import { HttpError } from '../http-error.ts'
import { answersNotFound } from '../http/problem.ts'
import { jsonAnswer } from '../http/respond.ts'

const KEEP_ALIVE_MS = 30_000
/** How soon a client comes back after a dropped stream (the `retry` field, WHATWG HTML §9.2.6). */
export const RETRY_MS = 1000

/** A change the view cannot tell exactly: the stream ends, and the client that comes back is given the value again. */
export const CANNOT_TELL = Symbol('cannot tell')

/** What a subscriber is told of one change: the change, another in its place (a removal), nothing, or CANNOT_TELL. */
export type Told = LoggedChange | undefined | typeof CANNOT_TELL

/**
 * How the changes are told to one subscriber (under `--auth`, lib/resources/change-access.ts:
 * only what it may read, without password hashes); without a view, every change as it is.
 */
export interface ChangeView {
  /** Reads what the view needs to tell the changes from now on; `newest` is the id of the newest change. */
  prepare(newest: () => number): Promise<void>
  /** Whether each of the missed changes a client resumes with can be told (the view is left as it was). */
  canTell(entries: readonly LoggedChange[]): boolean
  /** Starts telling: the missed changes of a client that resumes, or those after the value. */
  begin(resuming: boolean): void
  /** The value's JSON text as the subscriber may see it. */
  value(text: string): string
  tell(entry: LoggedChange): Told
  /** When the subscriber's right to the stream ends (milliseconds since the epoch): the stream ends then. */
  endsAt?: number
  /** Whether a change ends the subscriber's right to the stream (its token refused from now on): the stream ends. */
  endedBy?(change: Change): boolean
}

const views = new WeakMap<Context, ChangeView>()

/** `context`, whose changes are told through `view`. */
export function withChangeView(context: Context, view: ChangeView): Context {
  views.set(context, view)
  return context
}

/** Does the client ask for the change feed: an event stream (SSE), or `?_changes` as JSON? */
export function wantsChanges(context: Context): boolean {
  if (context.method !== 'GET' && context.method !== 'HEAD') return false
  if (context.query.has('_changes')) return true
  const accept = context.requestHeaders.accept
  return context.method === 'GET' && accept !== undefined && accept.includes('text/event-stream')
}

/**
 * Answers a request for the change feed of a node (docs/http-api.md, "Live updates"):
 * `?_changes` polls it as JSON, anything else opens an event stream.
 * `read` is the GET route of the URL, whose answer is the node's value.
 */
export function serveChanges(context: Context, streams: Set<() => void>, read: RouteHandler | undefined): Promise<Answer> {
  return context.query.has('_changes') ? changesAnswer(context, read) : openEventStream(context, streams, read)
}

/** Events sent by each open or closed stream, for the request log. */
const streamsSent = new WeakMap<ServerResponse, { events: number }>()

/** How many events a stream sent, or undefined when `res` answered no event stream. */
export function eventsSent(res: ServerResponse): number | undefined {
  return streamsSent.get(res)?.events
}

/**
 * Streams a node as Server-Sent Events (WHATWG HTML §9.2): first `value` with
 * what a GET of the same URL answers now, then `put`, `patch` and `delete` for
 * every change at or below the node (and `delete` when an ancestor goes).
 * Every event carries the id of its change; a client that comes back with
 * `Last-Event-ID` (or `?since=`) gets the changes it missed instead of the
 * value, or `gap` and the value when they are no longer kept. Events are read
 * from the change log as the reader takes them, so a stream holds no queue
 * of its own; one whose reader falls too far behind is closed.
 */
async function openEventStream(context: Context, streams: Set<() => void>, read: RouteHandler | undefined): Promise<Answer> {
  const { documents, path, settings } = context
  // Each stream holds a connection and a file descriptor for as long as it lives: cap them.
  if (streams.size >= settings.maxStreams) {
    throw new HttpError(503, `Too many event streams are open (the limit is ${settings.maxStreams}); close one or try again later.`, {
      'Retry-After': '5',
    })
  }
  const log = changeLogOf(documents)
  const resumeFrom = (context.requestHeaders['last-event-id'] as string | undefined) ?? context.query.get('since') ?? undefined
  const resumeId = resumeFrom === undefined ? undefined : parseId(resumeFrom)
  if (resumeId !== undefined) await log.recall(resumeId)
  const view = views.get(context)
  let resumes = resumeId !== undefined && log.covers(resumeId)
  if (view) {
    await view.prepare(() => log.last)
    // The window may have moved on while the store was read.
    resumes &&= log.covers(resumeId!) && view.canTell(log.after(resumeId!)!.filter((entry) => concerns(path, entry)))
    view.begin(resumes)
  }
  /** The id of the last change this stream has dealt with (sent, or passed over as not its own). */
  let cursor = resumes ? resumeId! : log.last
  /** The response, once the answer is written (Answer.stream). */
  let res: ServerResponse | undefined
  let closed = false
  let waitingForDrain = false
  const sent = { events: 0 }

  const send = (text: string) => {
    res!.write(text)
    sent.events++
  }
  /** Sends what the log holds after the cursor, until the reader has `maxStreamBuffer` bytes waiting. */
  const pump = () => {
    while (!closed && cursor < log.last) {
      if (res!.writableLength >= settings.maxStreamBuffer) return waitForDrain()
      const entry = log.at(cursor + 1)
      // The window moved past what this stream has yet to send: close, and the client resumes into a `gap`.
      if (!entry) return close(true)
      cursor++
      if (!concerns(path, entry)) continue
      const told = view ? view.tell(entry) : entry
      if (told === CANNOT_TELL) return close()
      if (told) send(eventText(told))
    }
  }
  const waitForDrain = () => {
    if (waitingForDrain) return
    waitingForDrain = true
    res!.once('drain', () => {
      waitingForDrain = false
      pump()
    })
  }
  // Listen before reading, so no change between the read and the first event is lost.
  const unsubscribe = documents.subscribe((change) => {
    if (view?.endedBy?.(change)) return close()
    if (!res || closed || !concerns(path, change)) return
    // A reader that has not taken what it was sent is not sent more: it comes back for it by id.
    if (res.writableLength >= settings.maxStreamBuffer) return close(true)
    pump()
  })
  let keepAlive: NodeJS.Timeout | undefined
  let ending: NodeJS.Timeout | undefined
  function close(cutOff = false) {
    if (closed) return
    closed = true
    clearInterval(keepAlive)
    clearTimeout(ending)
    unsubscribe()
    streams.delete(close)
    // Ending would keep what is buffered until the reader takes it; a reader cut off gets nothing more.
    if (cutOff) res?.destroy()
    else if (res?.headersSent) res.end() // before the head, the stream is not written yet: its writing ends it
  }
  streams.add(close)

  let value: string | undefined
  if (!resumes) {
    value = await currentValue(context, read).catch((error: unknown) => {
      close()
      throw error
    })
    if (view) value = view.value(value)
  }
  // The stream is written once the answer is the network's (respond.ts, writeAnswer), with the request's own headers.
  const stream = (response: ServerResponse, held: readonly string[]) => {
    res = response
    response.req.on('close', () => close())
    response.on('error', () => close())
    // Closed while the value was read (handler.close), or the client went meanwhile.
    if (closed || response.req.destroyed || response.socket?.destroyed !== false) {
      close()
      response.end()
      return
    }
    response.writeHead(200, [
      ...held,
      'Content-Type', 'text/event-stream; charset=utf-8',
      'Cache-Control', 'no-cache',
      'Connection', 'keep-alive',
      'X-Accel-Buffering', 'no',
    ])
    streamsSent.set(response, sent)
    keepAlive = setInterval(() => {
      if (response.writableLength >= settings.maxStreamBuffer) close(true)
      else response.write(': keep-alive\n\n')
    }, KEEP_ALIVE_MS)
    // A token's stream ends when the token does (docs/accounts.md, "Event streams"); coming back with it is a 401.
    if (view?.endsAt !== undefined) ending = setTimeout(() => close(), Math.max(0, view.endsAt - Date.now()))
    const retry = `retry: ${RETRY_MS}\n`
    const shownPath = JSON.stringify(displayPath(path))
    if (value === undefined) response.write(`${retry}\n`)
    // The gap event has no id: a client dropped before the value comes back to the id it had, and is told again.
    else if (resumeFrom !== undefined) send(`${retry}event: gap\ndata: {"path":${shownPath},"since":${JSON.stringify(resumeFrom)}}\n\n`)
    if (value !== undefined) send(`${resumeFrom === undefined ? retry : ''}id: ${cursor}\nevent: value\ndata: {"path":${shownPath},"data":${value}}\n\n`)
    pump()
  }
  return { status: 200, stream }
}

/**
 * `GET /node?_changes&since=ID`: the changes at or below the node after ID,
 * with the id of the last change, or the node's value when ID cannot be
 * resumed from (docs/http-api.md, "Live updates").
 */
async function changesAnswer(context: Context, read: RouteHandler | undefined): Promise<Answer> {
  const log = changeLogOf(context.documents)
  const since = context.query.get('since')
  const sinceId = since === null ? undefined : parseId(since)
  if (since !== null && sinceId === undefined) {
    throw new HttpError(400, `since must be the id of a change, a whole number as events carry it (got ${JSON.stringify(since)}).`)
  }
  if (sinceId !== undefined) await log.recall(sinceId)
  const view = views.get(context)
  await view?.prepare(() => log.last)
  let last = log.last
  const missed = sinceId === undefined ? undefined : log.after(sinceId)?.filter((entry) => concerns(context.path, entry))
  if (missed && (!view || view.canTell(missed))) {
    view?.begin(true)
    const changes = missed.map((entry) => (view ? view.tell(entry) : entry)).filter((entry): entry is LoggedChange => entry !== undefined && entry !== CANNOT_TELL)
      .map(({ id, type, json }) => ({ id, type, ...JSON.parse(json) as { path: string; data: unknown } }))
    return jsonAnswer(context, 200, { last, changes })
  }
  last = log.last
  const text = await currentValue(context, read)
  const value = JSON.parse(view ? view.value(text) : text)
  return jsonAnswer(context, 200, sinceId === undefined ? { last, value } : { last, gap: true, value })
}

/** A change id as events carry it: decimal digits. */
function parseId(text: string): number | undefined {
  const trimmed = text.trim()
  return /^\d{1,16}$/.test(trimmed) ? Number(trimmed) : undefined
}

/**
 * The node's value as JSON text: what the URL's own GET route answers for
 * the same query (a declared collection with nothing in it is `[]`, listing
 * queries apply), read through that route; `null` when it answers 404.
 * Other refusals (a malformed query) are the stream's answer.
 */
async function currentValue(context: Context, read: RouteHandler | undefined): Promise<string> {
  if (!read) return 'null'
  const query = new URLSearchParams(context.query)
  query.delete('_changes')
  query.delete('since')
  let answer: Answer
  try {
    answer = await read({ ...context, method: 'GET', query })
  } catch (error) {
    if (answersNotFound(error)) return 'null'
    throw error
  }
  // A JSON answer ends with a newline (respond.ts, jsonTextAnswer), which an event's data line cannot hold; kept bytes come as a Buffer.
  // The json-server mode's answers are laid out on lines: a newline in JSON text is only ever layout (one in a string is escaped).
  return answer.status === 200 && answer.body !== undefined ? answer.body.toString().trimEnd().replace(/\n\s*/g, '') : 'null'
}

/** A change concerns a stream when it is at or below the watched node, or deletes an ancestor of it. */
function concerns(watched: NodePath, change: Pick<Change, 'path' | 'type'>): boolean {
  const changed = change.path
  const shorter = Math.min(watched.length, changed.length)
  for (let index = 0; index < shorter; index++) if (watched[index] !== changed[index]) return false
  return changed.length >= watched.length || change.type === 'delete'
}

/** Each event's text is built once and shared by every stream that sends it. */
const eventTexts = new WeakMap<LoggedChange, string>()

function eventText(entry: LoggedChange): string {
  let text = eventTexts.get(entry)
  if (text === undefined) {
    text = `id: ${entry.id}\nevent: ${entry.type}\ndata: ${entry.json}\n\n`
    eventTexts.set(entry, text)
  }
  return text
}
