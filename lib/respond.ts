import type { Context } from './context.ts'
import type { StoredDoc } from './store/store.ts'
import { matchesAny } from './documents.ts'

/** Sends a JSON answer; HEAD gets the same headers and no body. */
export function sendJson(context: Context, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const { res } = context
  const text = JSON.stringify(body)
  res.statusCode = status
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value)
  res.setHeader('Content-Type', 'application/json; charset=utf-8')
  res.setHeader('Content-Length', Buffer.byteLength(text))
  res.end(context.method === 'HEAD' ? undefined : text)
}

/** Sends one stored document with its ETag; a GET whose If-None-Match matches gets 304 (RFC 9110 §13.1.2). */
export function sendDocument(context: Context, stored: StoredDoc, status = 200, headers: Record<string, string> = {}): void {
  const ifNoneMatch = context.req.headers['if-none-match']
  const isRead = context.method === 'GET' || context.method === 'HEAD'
  if (isRead && ifNoneMatch !== undefined && matchesAny(ifNoneMatch, stored, true)) {
    context.res.statusCode = 304
    context.res.setHeader('ETag', stored.etag)
    context.res.end()
    return
  }
  sendJson(context, status, stored.doc, { ...headers, ETag: stored.etag })
}

export function sendNoContent(context: Context, headers: Record<string, string> = {}): void {
  context.res.statusCode = 204
  for (const [name, value] of Object.entries(headers)) context.res.setHeader(name, value)
  context.res.end()
}
