import type { IncomingMessage, ServerResponse } from 'node:http'
import { isUtf8 } from 'node:buffer'
import { HttpError } from '../http-error.ts'
import { closeOnceDrained } from './linger.ts'
import { quotedHeader } from './problem.ts'
import { decodeUrlEncoded } from '../path.ts'
import { isObject, jsonKindOf, type JsonObject } from '../json/values.ts'
import { inexactJson, jsonErrorOffset, lineAndColumn, nestingPastLimit } from '../json/syntax.ts'
import { parse as parseQueryString } from 'node:querystring'

export interface BodyLimits {
  /** Largest body in bytes (413 past it). */
  maxBody: number
  /** Deepest nesting of arrays and objects (400 past it). */
  maxDepth: number
}

export const defaultBodyLimits: BodyLimits = { maxBody: 1024 * 1024, maxDepth: 64 }

/** The most of a refused body read and dropped before its connection closes: this, or 4 × maxBody when larger. */
const MIN_DRAIN_BYTES = 16 * 1024 * 1024

/**
 * Reads a POST/PUT/PATCH body as a JSON object. JSON (`application/json`,
 * any `+json` type) and `application/x-www-form-urlencoded` are accepted; an
 * empty body is `{}`. Every refusal is an HttpError that says what to fix.
 */
export async function readJsonBody(req: IncomingMessage, limits: BodyLimits = defaultBodyLimits): Promise<JsonObject> {
  const kind = bodyKind(req.headers['content-type'])
  // Embedded after a body parser (express.json(), say), the stream has been read: its end will not come again.
  if (req.readableEnded) return bodyReadEarlier(req, kind, limits)
  checkContentEncoding(req.headers['content-encoding'])
  const declaredLength = Number(req.headers['content-length'])
  if (declaredLength > limits.maxBody) throw tooLarge(req, limits)
  sendContinue(req)
  return parseBody(await readBytes(req, limits), kind, req.headers['content-type'], limits)
}

/** Requests whose client waits for `100 Continue` before it sends the body, with the answer that will carry it. */
const awaitingContinue = new WeakMap<IncomingMessage, ServerResponse>()

/**
 * Holds back the `100 Continue` a request with `Expect: 100-continue` asks for
 * until its body is about to be read (createServer's 'checkContinue'): an answer
 * decided before that (a 413 from Content-Length, a 401, a 404) goes out without
 * one, and the client never sends the body (RFC 9110 §10.1.1).
 */
export function continueWhenBodyRead(req: IncomingMessage, res: ServerResponse): void {
  awaitingContinue.set(req, res)
}

function sendContinue(req: IncomingMessage): void {
  const res = awaitingContinue.get(req)
  if (res === undefined) return
  awaitingContinue.delete(req)
  res.writeContinue()
}

/**
 * Bodies are read as sent: a compressed one (`Content-Encoding: gzip`, `br`, …)
 * is refused with 415 naming its coding, and `Accept-Encoding: identity` says
 * what is taken instead (RFC 9110 §15.5.16, §12.5.3).
 */
function checkContentEncoding(header: string | undefined): void {
  if (header === undefined) return
  const codings = header.split(',').map((coding) => coding.trim().toLowerCase()).filter((coding) => coding !== '' && coding !== 'identity')
  if (codings.length === 0) return
  const named = quotedHeader(codings.join(', ').slice(0, 60))
  throw new HttpError(415, `Content-Encoding "${named}" is not accepted; send the body uncompressed.`, { 'Accept-Encoding': 'identity' })
}

function parseBody(bytes: Buffer, kind: BodyKind, header: string | undefined, limits: BodyLimits): JsonObject {
  if (bytes.length === 0 && kind !== 'unsupported') return {}
  if (kind === 'missing') {
    throw new HttpError(415, 'The request has a body but no Content-Type; send it as JSON with "Content-Type: application/json".')
  }
  if (kind === 'unsupported') {
    throw new HttpError(415, `Content-Type "${quotedHeader(header!)}" is not accepted; send JSON with "Content-Type: application/json" (or a form as application/x-www-form-urlencoded).`)
  }
  const text = decodeUtf8(bytes)
  if (kind === 'form') {
    refuseJsonSentAsForm(text)
    return Object.fromEntries(decodeUrlEncoded(text, 'form field'))
  }
  checkDepth(text, limits.maxDepth)
  return requireObject(parseJson(text))
}

/**
 * `curl -d '{"a":1}'` labels its body a form, which would store a field named `{"a":1}` with an empty
 * value. A form encoder percent-encodes `{` and `[` (the WHATWG URL standard,
 * application/x-www-form-urlencoded serializer), so a form body that starts with one is JSON sent
 * with the wrong Content-Type: refused, nothing stored (docs/http-api.md, "Requests and errors").
 */
function refuseJsonSentAsForm(text: string): void {
  const first = text.trimStart()[0]
  if (first !== '{' && first !== '[') return
  throw new HttpError(415, 'The body is JSON but its Content-Type says a form (application/x-www-form-urlencoded, curl -d\'s default); send it with "Content-Type: application/json" (curl -H \'Content-Type: application/json\', or curl --json).')
}

function requireObject(value: unknown): JsonObject {
  if (!isObject(value)) {
    throw new HttpError(400, `The body must be a JSON object ({ ... }), not ${jsonKindOf(value)}.`)
  }
  return value
}

/** The body as an earlier middleware left it in `req.body`: parsed (express.json()), raw bytes or text, or nothing. */
function bodyReadEarlier(req: IncomingMessage, kind: BodyKind, limits: BodyLimits): JsonObject {
  // Read by parseBodyForMiddlewares: the body as sent is held to every rule, whatever the middlewares made of req.body.
  const sent = bytesSent.get(req)
  if (sent !== undefined) parseBody(sent, kind, req.headers['content-type'], limits)
  const earlier = (req as IncomingMessage & { body?: unknown }).body
  if (earlier === undefined) {
    // A fault of the embedding app, not of the client: a 500 whose log line says what to change.
    throw new Error('The request body was read before restdir saw it and req.body holds nothing: mount restdir before the middleware that read it.')
  }
  if (Buffer.isBuffer(earlier) || typeof earlier === 'string') return parseBody(Buffer.from(earlier), kind, req.headers['content-type'], limits)
  return requireObject(earlier)
}

/** The bytes of bodies parseBodyForMiddlewares read, as sent. */
const bytesSent = new WeakMap<IncomingMessage, Buffer>()

/**
 * json-server 0.17's bodyParser (body-parser 1.x's `json({ limit: '10mb' })` and `urlencoded({ extended:
 * false })`), for the app's own middlewares (lib/middleware/middlewares.ts): `req.body` is `{}`, or, for a
 * request with an `application/json` or form body, that body parsed (a JSON object or array, a form
 * as node's querystring reads it: a repeated field an array). Another type is left unread, for
 * restdir's own reading to refuse or take. The bytes are kept, once: the API reads the body from
 * `req.body` afterwards (bodyReadEarlier), a middleware's changes included.
 */
export async function parseBodyForMiddlewares(req: IncomingMessage, limits: BodyLimits = defaultBodyLimits): Promise<void> {
  const request = req as IncomingMessage & { body?: unknown; _body?: boolean }
  // `_body` is body-parser's own mark of a body it parsed.
  if (request._body || req.readableEnded) return
  request.body ??= {}
  if (req.headers['transfer-encoding'] === undefined && !(Number(req.headers['content-length']) >= 0)) return
  const type = (req.headers['content-type'] ?? '').split(';', 1)[0].trim().toLowerCase()
  if (type !== 'application/json' && type !== 'application/x-www-form-urlencoded') return
  checkContentEncoding(req.headers['content-encoding'])
  if (Number(req.headers['content-length']) > limits.maxBody) throw tooLarge(req, limits)
  sendContinue(req)
  const bytes = await readBytes(req, limits)
  bytesSent.set(req, bytes)
  request._body = true
  const text = decodeUtf8(bytes)
  if (type === 'application/x-www-form-urlencoded') {
    request.body = parseQueryString(text)
    return
  }
  if (text.length === 0) return // an empty JSON body is {}, as body-parser has it
  checkDepth(text, limits.maxDepth)
  // body-parser's strict mode: an object or an array, nothing else.
  const first = text.trimStart()[0]
  if (first !== '{' && first !== '[') throw new HttpError(400, `The JSON body must be an object or an array (it starts with ${JSON.stringify(first ?? '')}).`)
  try {
    request.body = JSON.parse(text)
  } catch {
    throw notJson(text)
  }
}

type BodyKind = 'json' | 'form' | 'missing' | 'unsupported'

/** Media types compare case-insensitively and ignore parameters such as charset (RFC 9110 §8.3.1). */
function bodyKind(header: string | undefined): BodyKind {
  if (header === undefined || header.trim() === '') return 'missing'
  const type = header.split(';', 1)[0].trim().toLowerCase()
  if (type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'))) return 'json'
  if (type === 'application/x-www-form-urlencoded') return 'form'
  return 'unsupported'
}

function tooLarge(req: IncomingMessage, limits: BodyLimits): HttpError {
  // The rest of the body is never buffered; it is read and dropped, within bounds, so the client reads the 413 before the close.
  closeOnceDrained(req, Math.max(MIN_DRAIN_BYTES, 4 * limits.maxBody))
  return new HttpError(413, `The body is larger than the limit of ${limits.maxBody} bytes; send a smaller one, or raise the limit with --max-body (maxBody as a library option).`, { Connection: 'close' })
}

function readBytes(req: IncomingMessage, limits: BodyLimits): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size > limits.maxBody) {
        cleanup()
        reject(tooLarge(req, limits))
        return
      }
      chunks.push(chunk)
    }
    const onEnd = () => {
      cleanup()
      resolve(Buffer.concat(chunks, size))
    }
    const onError = (error: Error) => {
      cleanup()
      reject(new HttpError(400, `The request body could not be read: ${error.message}.`))
    }
    const onAborted = () => {
      cleanup()
      reject(new HttpError(400, 'The client stopped sending the body before it ended.'))
    }
    const cleanup = () => {
      req.off('data', onData)
      req.off('end', onEnd)
      req.off('error', onError)
      req.off('aborted', onAborted)
    }
    req.on('data', onData)
    req.on('end', onEnd)
    req.on('error', onError)
    req.on('aborted', onAborted)
  })
}

function decodeUtf8(bytes: Buffer): string {
  if (isUtf8(bytes)) return bytes.toString('utf8')
  throw new HttpError(400, `The body is not valid UTF-8 (first bad byte at offset ${firstInvalidUtf8(bytes)}).`)
}

/** Offset of the first byte that breaks UTF-8 (RFC 3629 §4), for a message a person can act on. */
function firstInvalidUtf8(bytes: Uint8Array): number {
  let index = 0
  while (index < bytes.length) {
    const byte = bytes[index]
    let length: number
    let min: number
    if (byte < 0x80) { index++; continue }
    else if (byte >= 0xc2 && byte <= 0xdf) { length = 2; min = 0x80 }
    else if (byte >= 0xe0 && byte <= 0xef) { length = 3; min = 0x800 }
    else if (byte >= 0xf0 && byte <= 0xf4) { length = 4; min = 0x10000 }
    else return index
    let codePoint = byte & (0xff >> (length + 1))
    for (let next = 1; next < length; next++) {
      const continuation = bytes[index + next]
      if (continuation === undefined || (continuation & 0xc0) !== 0x80) return index
      codePoint = (codePoint << 6) | (continuation & 0x3f)
    }
    if (codePoint < min || codePoint > 0x10ffff || (codePoint >= 0xd800 && codePoint <= 0xdfff)) return index
    index += length
  }
  return -1
}

/** Refuses nesting deeper than the limit before parsing, so no parser recursion is ever at risk. */
function checkDepth(text: string, maxDepth: number): void {
  const at = nestingPastLimit(text, maxDepth)
  if (at >= 0) throw new HttpError(400, `The JSON body nests deeper than ${maxDepth} levels (at ${place(text, at)}).`)
}

/** The 400 for a body JSON.parse refused, saying where and what was expected there. */
function notJson(text: string): HttpError {
  const { offset, expected } = jsonErrorOffset(text)
  return new HttpError(400, `The body is not valid JSON: at ${place(text, offset)} expected ${expected}.`)
}

function place(text: string, offset: number): string {
  const { line, column } = lineAndColumn(text, offset)
  return `line ${line}, column ${column} (offset ${offset})`
}

function parseJson(text: string): unknown {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw notJson(text)
  }
  // A document is stored exactly as sent or refused (docs/http-api.md, "Requests and errors").
  const problems = inexactJson(text, value, 5)
  if (problems.length > 0) {
    const list = problems.map((problem) => `${problem.path}: ${problem.message}`).join('; ')
    throw new HttpError(400, `The body holds ${problems.length === 1 ? 'a value' : 'values'} that would not be stored exactly as sent: ${list}.`)
  }
  return value
}

/** The patch formats a PATCH takes, for `Accept-Patch` (RFC 5789 §3.1; docs/http-api.md, "PATCH"). */
export const ACCEPT_PATCH = 'application/merge-patch+json, application/json-patch+json'

/** A PATCH body: a JSON Patch (RFC 6902), not yet checked, or a merge patch (RFC 7396) as readJsonBody reads it. */
export type PatchBody = { type: 'json-patch'; operations: unknown } | { type: 'merge'; patch: JsonObject }

/**
 * Reads a PATCH body by its media type: `application/json-patch+json` is a JSON
 * Patch (any JSON value here: the patch's own checks say what is wrong with it);
 * JSON, any other `+json` type and a form are a merge patch. A 415 carries
 * `Accept-Patch` and says which types are taken (RFC 5789 §2.2).
 */
export async function readPatchBody(req: IncomingMessage, limits: BodyLimits = defaultBodyLimits): Promise<PatchBody> {
  const header = req.headers['content-type']
  if (!isJsonPatch(header)) return mergePatchOf(header, readJsonBody(req, limits))
  if (req.readableEnded) {
    const earlier = (req as IncomingMessage & { body?: unknown }).body
    // Nothing there is the embedding app's fault, which readJsonBody reports.
    if (earlier === undefined) return { type: 'merge', patch: await readJsonBody(req, limits) }
    if (!Buffer.isBuffer(earlier) && typeof earlier !== 'string') return { type: 'json-patch', operations: earlier }
    return { type: 'json-patch', operations: parseJsonText(Buffer.from(earlier), limits) }
  }
  checkContentEncoding(req.headers['content-encoding'])
  if (Number(req.headers['content-length']) > limits.maxBody) throw tooLarge(req, limits)
  sendContinue(req)
  return { type: 'json-patch', operations: parseJsonText(await readBytes(req, limits), limits) }
}

function isJsonPatch(header: string | undefined): boolean {
  return (header ?? '').split(';', 1)[0].trim().toLowerCase() === 'application/json-patch+json'
}

/** A merge patch as readJsonBody reads it; a 415 carries `Accept-Patch` and says which types are taken. */
async function mergePatchOf(header: string | undefined, reading: Promise<JsonObject>): Promise<PatchBody> {
  const patch = await reading.catch((error: unknown) => {
    if (!(error instanceof HttpError) || error.status !== 415) throw error
    const ofType = bodyKind(header) === 'unsupported' && !Object.hasOwn(error.headers, 'Accept-Encoding')
    const detail = ofType ? `Content-Type "${header}" is not a patch this server applies; send application/merge-patch+json (or application/json) for a merge patch (RFC 7396), or application/json-patch+json for a JSON Patch (RFC 6902).` : error.detail
    throw new HttpError(415, detail, { ...error.headers, 'Accept-Patch': ACCEPT_PATCH })
  })
  return { type: 'merge', patch }
}

/** A request's body as a resource reads it (Context.body): a JSON object (readJsonBody's rules), or a PATCH body. */
export interface RequestBody {
  json(): Promise<JsonObject>
  patch(): Promise<PatchBody>
}

/** The body of a request from the network, read when a resource asks for it. */
export class SentBody implements RequestBody {
  constructor(private readonly req: IncomingMessage, private readonly limits: BodyLimits) {}
  json(): Promise<JsonObject> {
    return readJsonBody(this.req, this.limits)
  }
  patch(): Promise<PatchBody> {
    return readPatchBody(this.req, this.limits)
  }
}

/** A body given as JSON text with its Content-Type (a request of a batch), held to the rules of a body sent as it is. */
export function givenBody(text: string, header: string | undefined, limits: BodyLimits): RequestBody {
  const json = async () => parseBody(Buffer.from(text), bodyKind(header), header, limits)
  return {
    json,
    patch: async () => (isJsonPatch(header) ? { type: 'json-patch', operations: parseJsonText(Buffer.from(text), limits) } : mergePatchOf(header, json())),
  }
}

function parseJsonText(bytes: Buffer, limits: BodyLimits): unknown {
  const text = decodeUtf8(bytes)
  checkDepth(text, limits.maxDepth)
  return parseJson(text)
}
