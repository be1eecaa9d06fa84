import { request } from 'node:http'
import type { IncomingMessage, ClientRequest } from 'node:http'

export interface ServerSentEvent {
  event: string
  data: any
  /** The event's `id:` field, when it has one. */
  id?: string
}

export interface EventStream {
  response: IncomingMessage
  /** The next event, waiting for it if need be (fails after `timeoutMs`, two seconds unless told). */
  next(timeoutMs?: number): Promise<ServerSentEvent>
  /** The `retry:` field, once one came. */
  retry(): string | undefined
  /** Resolves when the server ends or drops the stream. */
  ended: Promise<void>
  close(): void
}

/**
 * Opens an SSE stream the way EventSource does (with `Last-Event-ID` when
 * given in `headers`), and parses events as they arrive (WHATWG HTML §9.2.6).
 */
export function openStream(port: number, target: string, headers: Record<string, string> = {}): Promise<EventStream> {
  return new Promise((resolve, reject) => {
    const queue: ServerSentEvent[] = []
    const waiters: Array<(event: ServerSentEvent) => void> = []
    let buffer = ''
    let retry: string | undefined
    let answered = false
    const req: ClientRequest = request({ host: '127.0.0.1', port, path: target, headers: { Accept: 'text/event-stream', ...headers } }, (response) => {
      answered = true
      const ended = new Promise<void>((resolveEnd) => response.on('close', resolveEnd))
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => {
        buffer += chunk
        let end: number
        while ((end = buffer.indexOf('\n\n')) !== -1) {
          const block = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          retry = /^retry: (.*)$/m.exec(block)?.[1] ?? retry
          const event = /^event: (.*)$/m.exec(block)?.[1]
          const data = /^data: (.*)$/m.exec(block)?.[1]
          const id = /^id: (.*)$/m.exec(block)?.[1]
          if (event === undefined || data === undefined) continue
          const parsed: ServerSentEvent = { event, data: JSON.parse(data) }
          if (id !== undefined) parsed.id = id
          const waiter = waiters.shift()
          if (waiter) waiter(parsed)
          else queue.push(parsed)
        }
      })
      resolve({
        response,
        next: (timeoutMs = 2000) => {
          const queued = queue.shift()
          if (queued) return Promise.resolve(queued)
          return new Promise((resolveEvent, rejectEvent) => {
            const timer = setTimeout(() => rejectEvent(new Error(`no event within ${timeoutMs} ms`)), timeoutMs)
            waiters.push((event) => {
              clearTimeout(timer)
              resolveEvent(event)
            })
          })
        },
        retry: () => retry,
        ended,
        close: () => req.destroy(),
      })
    })
    // A reset after the answer began is the stream closing; before it, the request failed.
    req.on('error', (error) => {
      if (!answered || (error as NodeJS.ErrnoException).code !== 'ECONNRESET') reject(error)
    })
    req.end()
  })
}

/** Strips the ids, for comparing events with what they should say. */
export function withoutId({ event, data }: ServerSentEvent): ServerSentEvent {
  return { event, data }
}
