import type { ServerResponse } from 'node:http'
import type { Answer, Context } from './context.ts'
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

/** Writes an answer to the network; HEAD gets the same headers and no body. */
export function writeAnswer(res: ServerResponse, answer: Answer, held: readonly string[], head: boolean): void {
  if (answer.stream) return answer.stream(res, held)
  const list = withHeaders(held, answer.headers)
  const { body } = answer
  if (body !== undefined) list.push('Content-Type', JSON_TYPE, 'Content-Length', answer.length ?? String(Buffer.byteLength(body)))
  res.writeHead(answer.status, list)
  res.end(head ? undefined : body)
}

export const JSON_TYPE = 'application/json; charset=utf-8'

/** A JSON answer of a value. */
export function jsonAnswer(context: Context, status: number, body: unknown, headers?: Record<string, string>): Answer {
  return jsonTextAnswer(context, status, JSON.stringify(body), headers)
}

/**
 * JSON that is already text, ending with a newline as a text file does, so
 * that answers printed in a terminal (curl) end their line (docs/http-api.md,
 * "Requests and errors").
 */
export function jsonTextAnswer(context: Context, status: number, text: string, headers?: Record<string, string>): Answer {
  return { status, headers, body: bodyOf(context, text) }
}

/**
 * The json-server mode answers as json-server lays JSON out (`json spaces` 2); an ETag is the stored
 * version's, and the mode's bytes are a function of that version, so the tag stays true to them.
 */
function bodyOf(context: Context, text: string): string {
  return `${context.settings.jsonServer ? indentJson(text) : text}\n`
}

/**
 * One stored document with its ETag; a GET or HEAD whose If-None-Match matches gets 304 (RFC 9110 §13.2.2).
 * A document read as text (Documents.readText) goes as it is.
 */
export function documentAnswer(context: Context, stored: StoredDoc | StoredText, status = 200, headers?: Record<string, string>): Answer {
  const isRead = context.method === 'GET' || context.method === 'HEAD'
  if (isRead && isNotModified(context.requestHeaders, stored)) return { status: 304, headers: { ETag: stored.etag } }
  const withTag = headers === undefined ? { ETag: stored.etag } : { ...headers, ETag: stored.etag }
  if ('json' in stored && stored.sent !== undefined) return keptAnswer(context, stored, status, withTag)
  return jsonTextAnswer(context, status, 'json' in stored ? stored.json : JSON.stringify(stored.doc), withTag)
}

/**
 * A document the store keeps (StoredText.sent): its answer's bytes are made
 * once per form and kept with it, the same bytes jsonTextAnswer would make.
 * Only a small one's, so what is kept stays within about the store cache's
 * own bound, each in a buffer of its own: a slice of Node's shared pool kept
 * for long would hold on to the whole pool slab.
 */
function keptAnswer(context: Context, stored: StoredText, status: number, headers: Record<string, string>): Answer {
  const form = context.settings.jsonServer ? 'indented' : 'compact'
  let sent = stored.sent
  if (sent?.form !== form) {
    const body = bodyOf(context, stored.json)
    const length = Buffer.byteLength(body)
    if (length > KEPT_BODY_BYTES) return { status, headers, body, length: String(length) }
    const bytes = Buffer.allocUnsafeSlow(length)
    bytes.write(body)
    stored.sent = sent = { form, bytes, length: String(length) }
  }
  return { status, headers, body: sent.bytes, length: sent.length }
}

/** The largest answer whose bytes are kept with its document (see keptAnswer). */
const KEPT_BODY_BYTES = 16 * 1024

export function noContent(headers?: Record<string, string>): Answer {
  return { status: 204, headers }
}

/** Sets headers held as a flat list on the response, for answers written by other means (static files, middlewares, errors). */
export function applyHeaders(res: ServerResponse, headers: readonly string[]): void {
  for (let index = 0; index < headers.length; index += 2) res.setHeader(headers[index], headers[index + 1])
}

function withHeaders(held: readonly string[], headers: Record<string, string> | undefined): string[] {
  if (headers === undefined) return held.slice()
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
