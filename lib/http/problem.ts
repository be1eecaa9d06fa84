import type { ServerResponse } from 'node:http'
import { STATUS_CODES } from 'node:http'
import { isUtf8 } from 'node:buffer'
import { StoreError } from '../store/errors.ts'
import { NothingStored } from '../data/documents.ts'
import { joinPath } from '../path.ts'
import { HttpError } from '../http-error.ts'

/*
 * Everything thrown while a request is answered becomes one
 * `application/problem+json` answer (RFC 9457) here: an HttpError
 * (lib/http-error.ts) as it says, a store's or the data layer's error by the
 * rules below, anything else a 500 that says nothing internal.
 */

/** Writes an RFC 9457 problem answer. Never includes a stack or a file-system path. */
export function sendProblem(res: ServerResponse, error: HttpError, head = false): void {
  if (res.headersSent) {
    res.destroy()
    return
  }
  const body = problemJson(error)
  res.statusCode = error.status
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value)
  res.setHeader('Content-Type', 'application/problem+json')
  res.setHeader('Content-Length', Buffer.byteLength(body))
  res.end(head ? undefined : body)
}

/**
 * The RFC 9457 body of an error: `type`, `title`, `status` and `detail`, and the error's extension
 * members after them, ending with a newline as every JSON answer does (respond.ts, jsonTextAnswer).
 */
export function problemJson(error: HttpError): string {
  const problem = {
    type: 'about:blank',
    title: STATUS_CODES[error.status] ?? 'Error',
    status: error.status,
    detail: error.detail,
    ...error.extensions,
  }
  return `${JSON.stringify(problem)}\n`
}

/** The most of a header value a detail quotes; the rest is `…`. */
const MAX_QUOTED_HEADER = 200

/**
 * A header value as a detail quotes it, faithfully: Node hands header values over as Latin-1
 * strings (one character a byte), so typographic quotes pasted into an If-Match would come back
 * as `â€œ`. The bytes are read as UTF-8 when they are UTF-8; a byte that is not, and a control
 * character, is written `\xNN`. Every detail that quotes a header goes through here
 * (docs/http-api.md, "Requests and errors").
 */
export function quotedHeader(value: string): string {
  const bytes = Buffer.from(value, 'latin1')
  const text = isUtf8(bytes) ? bytes.toString('utf8') : [...value].map((char) => (char.charCodeAt(0) > 0x7e ? hexEscape(char) : char)).join('')
  const shown = text.replace(/[\x00-\x1f\x7f]/g, hexEscape)
  return shown.length > MAX_QUOTED_HEADER ? `${shown.slice(0, MAX_QUOTED_HEADER)}…` : shown
}

function hexEscape(char: string): string {
  return `\\x${char.charCodeAt(0).toString(16).padStart(2, '0')}`
}

/** Turns anything thrown into an HttpError; unknown faults become a 500 that says nothing internal. */
export function toHttpError(error: unknown): HttpError {
  if (error instanceof HttpError) return error
  if (error instanceof StoreError) return storeProblem(error)
  // The data layer's one "not found": a node that holds neither a document nor children.
  if (error instanceof NothingStored) return new HttpError(404, `Nothing is stored at ${joinPath(error.path)}.`)
  return new HttpError(500, 'The server met an unexpected fault; it has been logged and the server keeps serving.')
}

/** Whether anything thrown would be answered 404: a node the data layer found empty, or a resource's own 404. */
export function answersNotFound(error: unknown): boolean {
  return toHttpError(error).status === 404
}

/**
 * What a client hears of a store fault (see docs/http-api.md, "Requests and errors").
 * A broken document file is a 409 Conflict (RFC 9110 §15.5.10): the request
 * is fine but the node's current state keeps it from being served, and the
 * client can resolve that itself, with a PUT that replaces the file or a DELETE.
 */
export function storeProblem(error: StoreError): HttpError {
  const url = joinPath(error.path)
  switch (error.kind) {
    case 'bad-document':
      return new HttpError(409, `The document file for ${url} ${error.reason ?? 'cannot be read'}; PUT a document to replace it, or DELETE it.`)
    case 'disk-full':
      return new HttpError(507, `The disk holding the store is full, so ${url} was not written; the document as it was is unchanged. Free some space and retry.`)
    case 'out-of-descriptors':
      return new HttpError(503, 'The server has run out of file descriptors for the moment; retry shortly.', { 'Retry-After': '1' })
    case 'path-too-long':
      return new HttpError(414, `The path is too long for the store ${error.reason ?? 'folder on this file system'}; use shorter or fewer segments.`)
    case 'store-gone':
      return new HttpError(503, 'The store folder was deleted or moved away while the server runs; put it back, or restart the server on a store folder.')
    case 'blocked-path':
      return new HttpError(409, `The store cannot reach ${url}: its folder ${error.reason ?? 'is blocked'}. Remove that from the store folder (a DELETE removes a link in the node's own place).`)
    case 'unavailable':
      return new HttpError(503, `The database behind the store cannot be reached for the moment, so nothing at ${url} was read or changed; retry shortly.`, { 'Retry-After': '2' })
    case 'read-only':
      return new HttpError(503, `The store folder cannot be written (a read-only file system, or no permission), so ${url} was not changed; reads still work.`)
    case 'version-changed':
      return new HttpError(412, `${url} changed while this request was answered; nothing was written. Read it again and retry.`)
    case 'owner-missing':
      return new HttpError(404, `Nothing is stored at ${error.reason ?? 'the node that would own'} ${url}, so it was not written.`)
    case 'taken':
      return new HttpError(409, `A value of ${url} is already held by ${error.reason ?? 'another document'}.`)
    case 'file-edited':
      // 503, not 4xx: the request is fine and the fault is the server's file, fixed outside HTTP; retrying succeeds once it is (docs/json-server.md, "Serving a db.json").
      return new HttpError(503, `${url} was not changed: ${error.reason ?? 'the store file was edited by hand'}. Reads serve the last good state; fix the file and retry.`, { 'Retry-After': '1' })
    case 'batch-interrupted': {
      // The batch's own answer: not to be sent again, as it is completed from its journal (docs/storage.md, "Batches").
      const status = error.cause instanceof StoreError && error.cause.kind === 'disk-full' ? 507 : 503
      return new HttpError(status, `This batch could not all be written (${error.reason ?? 'the disk failed'}, at ${url}) once its journal was: the store completes it from the journal as soon as it can, and answers 503 for its nodes until then. Do not send it again; read its nodes once they answer.`)
    }
    case 'batch-unfinished':
      // 503: the node is fine and will be served again once the store has completed the batch (docs/storage.md, "Batches").
      return new HttpError(503, `A batch that changes ${url}, or a node above or below it, could not be completed on disk (${error.reason ?? 'the disk failed'}); the store is finishing it and serves ${url} again once it has. Retry shortly.`, { 'Retry-After': '1' })
  }
}
