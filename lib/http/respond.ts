import type { ServerResponse } from 'node:http'
import type { Context } from './context.ts'
import type { StoredDoc, StoredText } from '../store/store.ts'
import { isNotModified } from './conditional.ts'
import { indentJson } from '../json/indent.ts'

/*
 * Answers are written with one writeHead taking every header as a flat list
 * of names and values: the request's CORS headers (context.headers) and the
 * answer's own. node:http takes such a list as it is, where each setHeader
 * would validate, lower-case and store its header first; on a small GET that
 * is a tenth of the server's time (measured in bench/).
 */

/** Sends a JSON answer; HEAD gets the same headers and no body. */
export function sendJson(context: Context, status: number, body: unknown, headers: Record<string, string> = {}): void {
  sendJsonText(context, status, JSON.stringify(body), headers)
}

/**
 * Sends JSON that is already text, ending with a newline as a text file
 * does, so that answers printed in a terminal (curl) end their line
 * (docs/http-api.md, "Requests and errors").
 */
export function sendJsonText(context: Context, status: number, text: string, headers: Record<string, string>): void {
  const body = bodyOf(context, text)
  sendBody(context, status, body, String(Buffer.byteLength(body)), headers)
}

/**
 * The json-server mode answers as json-server lays JSON out (`json spaces` 2); an ETag is the stored
 * version's, and the mode's bytes are a function of that version, so the tag stays true to them.
 */
function bodyOf(context: Context, text: string): string {
  return `${context.settings.jsonServer ? indentJson(text) : text}\n`
}

function sendBody(context: Context, status: number, body: string | Buffer, length: string, headers: Record<string, string>): void {
  const list = withHeaders(context.headers, headers)
  list.push('Content-Type', 'application/json; charset=utf-8', 'Content-Length', length)
  context.res.writeHead(status, list)
  context.res.end(context.method === 'HEAD' ? undefined : body)
}

/**
 * Sends one stored document with its ETag; a GET or HEAD whose If-None-Match matches gets 304 (RFC 9110 §13.2.2).
 * A document read as text (Documents.readText) goes as it is.
 */
export function sendDocument(context: Context, stored: StoredDoc | StoredText, status = 200, headers: Record<string, string> = {}): void {
  const isRead = context.method === 'GET' || context.method === 'HEAD'
  if (isRead && isNotModified(context.req.headers, stored)) {
    context.res.writeHead(304, withHeaders(context.headers, { ETag: stored.etag }))
    context.res.end()
    return
  }
  if ('json' in stored && stored.sent !== undefined) return sendKept(context, stored, status, { ...headers, ETag: stored.etag })
  const text = 'json' in stored ? stored.json : JSON.stringify(stored.doc)
  sendJsonText(context, status, text, { ...headers, ETag: stored.etag })
}

/**
 * A document the store keeps (StoredText.sent): its answer's bytes are made
 * once per form and kept with it, the same bytes sendJsonText would make.
 * Only a small one's, so what is kept stays within about the store cache's
 * own bound, each in a buffer of its own: a slice of Node's shared pool kept
 * for long would hold on to the whole pool slab.
 */
function sendKept(context: Context, stored: StoredText, status: number, headers: Record<string, string>): void {
  const form = context.settings.jsonServer ? 'indented' : 'compact'
  let sent = stored.sent
  if (sent?.form !== form) {
    const body = bodyOf(context, stored.json)
    const length = Buffer.byteLength(body)
    if (length > KEPT_BODY_BYTES) return sendBody(context, status, body, String(length), headers)
    const bytes = Buffer.allocUnsafeSlow(length)
    bytes.write(body)
    stored.sent = sent = { form, bytes, length: String(length) }
  }
  sendBody(context, status, sent.bytes, sent.length, headers)
}

/** The largest answer whose bytes are kept with its document (see sendKept). */
const KEPT_BODY_BYTES = 16 * 1024

export function sendNoContent(context: Context, headers: Record<string, string> = {}): void {
  context.res.writeHead(204, withHeaders(context.headers, headers))
  context.res.end()
}

/** Sets headers held as a flat list on the response, for answers written by other means (static files, events, errors). */
export function applyHeaders(res: ServerResponse, headers: readonly string[]): void {
  for (let index = 0; index < headers.length; index += 2) res.setHeader(headers[index], headers[index + 1])
}

function withHeaders(held: readonly string[], headers: Record<string, string>): string[] {
  // An answer that names its own exposed headers (the json-server mode's, as json-server names them) sends only those.
  const list = EXPOSE in headers ? withoutHeader(held, EXPOSE) : held.slice()
  for (const name in headers) list.push(name, headers[name])
  return list
}

const EXPOSE = 'Access-Control-Expose-Headers'

function withoutHeader(held: readonly string[], name: string): string[] {
  const list: string[] = []
  for (let index = 0; index < held.length; index += 2) if (held[index] !== name) list.push(held[index], held[index + 1])
  return list
}
