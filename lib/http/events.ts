import type { Context } from '../context.ts'
import type { Change } from '../data/documents.ts'
import type { NodePath } from '../store/store.ts'
import { joinPath as displayPath } from '../path.ts'
import { HttpError } from './errors.ts'

const KEEP_ALIVE_MS = 30_000

/** Does the client ask for an event stream (SSE) rather than a JSON answer? */
export function wantsEventStream(context: Context): boolean {
  const accept = context.req.headers.accept
  return context.method === 'GET' && accept !== undefined && accept.includes('text/event-stream')
}

/**
 * Streams a node as Server-Sent Events (SPEC §10, WHATWG HTML §9.2): first
 * `value` with what a GET answers now, then `put`, `patch` and `delete` for
 * every change at or below the node (and `delete` when an ancestor goes).
 * Each event's text is built once and shared by every stream that sends it.
 */
export async function openEventStream(context: Context, streams: Set<() => void>): Promise<void> {
  const { req, res, documents, path } = context
  // Each stream holds a connection and a file descriptor for as long as it lives: cap them.
  if (streams.size >= context.settings.maxStreams) {
    throw new HttpError(503, `Too many event streams are open (the limit is ${context.settings.maxStreams}); close one or try again later.`, {
      'Retry-After': '5',
    })
  }
  res.writeHead(200, [
    ...context.headers,
    'Content-Type', 'text/event-stream; charset=utf-8',
    'Cache-Control', 'no-cache',
    'Connection', 'keep-alive',
    'X-Accel-Buffering', 'no',
  ])
  // Listen before reading, so no change between the read and the first event is lost.
  const pending: string[] = []
  let ready = false
  const unsubscribe = documents.subscribe((change) => {
    if (!concerns(path, change.path, change.type)) return
    const text = eventText(change)
    if (ready) res.write(text)
    else pending.push(text)
  })
  const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), KEEP_ALIVE_MS)
  const close = () => {
    clearInterval(keepAlive)
    unsubscribe()
    streams.delete(close)
    res.end()
  }
  streams.add(close)
  req.on('close', close)
  res.on('error', close)

  const value = await currentValue(context).catch(() => null)
  res.write(`event: value\ndata: ${JSON.stringify({ path: displayPath(path), data: value })}\n\n`)
  for (const text of pending) res.write(text)
  ready = true
}

async function currentValue(context: Context): Promise<unknown> {
  const stored = await context.documents.read(context.path)
  if (stored) return stored.doc
  return (await context.documents.list(context.path)) ?? null
}

/** A change concerns a stream when it is at or below the watched node, or deletes an ancestor of it. */
function concerns(watched: NodePath, changed: NodePath, type: Change['type']): boolean {
  const shorter = Math.min(watched.length, changed.length)
  for (let index = 0; index < shorter; index++) if (watched[index] !== changed[index]) return false
  return changed.length >= watched.length || type === 'delete'
}

const eventTexts = new WeakMap<Change, string>()

function eventText(change: Change): string {
  let text = eventTexts.get(change)
  if (text === undefined) {
    text = `event: ${change.type}\ndata: ${JSON.stringify({ path: displayPath(change.path), data: change.data })}\n\n`
    eventTexts.set(change, text)
  }
  return text
}
