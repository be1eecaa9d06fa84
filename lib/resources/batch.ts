import type { Answer, Answering, Context } from '../http/context.ts'
import { Documents } from '../data/documents.ts'
import { HttpError } from '../http-error.ts'
import { givenBody } from '../http/body.ts'
import { JSON_TYPE, jsonAnswer, noContent } from '../http/respond.ts'
import { toHttpError } from '../http/problem.ts'
import { defineValue, isObject, type JsonObject } from '../json/values.ts'
import { queryOf, splitPath } from '../path.ts'
import { HEAVY_STEP, pacer } from '../data/pace.ts'
import { isStoreError } from '../store/errors.ts'
import { BATCH_TEXT_FACTOR, StagedStore } from '../store/staged.ts'
import type { BatchOp } from '../store/store.ts'

/**
 * `POST /?_batch` on the API root (docs/http-api.md, "Batches"): several
 * writes applied all or none. Each request goes through the same dispatch as
 * it would alone (lib/handler.ts), against a staged view of the store (lib/store/staged.ts)
 * that shows it the requests before it; when every one succeeded, the store
 * applies what they did in one atomic step (Store.batch). Something another
 * client changed meanwhile that a request relied on makes the store refuse the
 * step: the batch then runs again from the start, against the store as it is
 * now, as a write without preconditions does (lib/data/documents.ts).
 */

/** Most requests in one batch (docs/http-api.md, "Batches"). */
export const MAX_BATCH_REQUESTS = 1000

/** Most times a batch runs again after a concurrent change made the store refuse it. */
const ATTEMPTS = 20

const METHODS = new Set(['PUT', 'POST', 'PATCH', 'DELETE'])

/** The request headers a batch's request may carry: the rest mean nothing inside a batch. */
const HEADERS = new Set(['if-match', 'if-none-match', 'content-type'])

/** Query parameters reserved on the API root, which no request of a batch may use. */
const RESERVED = ['_batch', '_reset', '_openapi']

/** A placeholder for what an earlier request made: `$0.id`, the whole of a path segment or of a string value. */
const PLACEHOLDER = /^\$(\d+)\.id$/

/** Answers a request below the API root as the server does (lib/handler.ts): declared resources, then the generic API. */
export type Dispatch = (context: Context) => Answering

interface BatchRequest {
  method: string
  path: string
  body: unknown
  headers: Record<string, string>
}

interface SubResponse {
  status: number
  headers: Record<string, string>
  body: unknown
}

export async function answerBatch(context: Context, dispatch: Dispatch): Promise<Answer> {
  const { method } = context
  if (method === 'OPTIONS') return noContent({ Allow: 'POST, OPTIONS' })
  if (method !== 'POST') throw new HttpError(405, `${method} /?_batch is not allowed; a batch is a POST.`, { Allow: 'POST, OPTIONS' })
  const requests = parseBatch(await context.body.json())
  if (!context.documents.appliesBatches) throw new HttpError(501, 'This store cannot apply a batch as one step (its Store has no batch method).')
  for (let attempt = 1; ; attempt++) {
    const staged = context.documents.staged(BATCH_TEXT_FACTOR * context.settings.bodyLimits.maxBody)
    const responses = await runAll(context, dispatch, requests, staged)
    try {
      await context.documents.batch(staged.ops, staged.changes, staged)
    } catch (error) {
      // Another client changed what the batch relied on: run it again against the store as it is now.
      if (attempt < ATTEMPTS && isStoreError(error) && ['version-changed', 'owner-missing', 'taken'].includes(error.kind)) continue
      throw error
    }
    return jsonAnswer(context, 200, { responses })
  }
}

/** Runs every request against the staged view, in order; the first that fails throws its problem, naming it. */
async function runAll(context: Context, dispatch: Dispatch, requests: readonly BatchRequest[], staged: StagedStore): Promise<SubResponse[]> {
  const documents = new Documents(staged)
  const made: (string | number | undefined)[] = []
  const responses: SubResponse[] = []
  // Staging is work on the event loop like a listing's (docs/http-api.md, "Batches"): other requests get their turn between the batch's requests.
  const pace = pacer()
  for (const [index, request] of requests.entries()) {
    const turn = pace(HEAVY_STEP)
    if (turn) await turn
    const before = staged.ops.length
    let response: SubResponse
    try {
      const target = resolvePath(request.path, made, index)
      const body = request.body === undefined ? undefined : resolveValues(request.body, made, index)
      response = await runOne(context, dispatch, documents, request, target, body)
    } catch (error) {
      throw failed(index, request, toHttpError(error))
    }
    if (response.status >= 400) {
      const detail = isObject(response.body) && typeof response.body.detail === 'string' ? response.body.detail : `it was answered ${response.status}`
      throw failed(index, request, new HttpError(response.status, detail))
    }
    made.push(idOf(staged.ops.slice(before)))
    responses.push(response)
  }
  return responses
}

/** The batch's answer when request `index` failed: that request's status, and a problem naming it. */
function failed(index: number, request: BatchRequest, error: HttpError): HttpError {
  if (error.status === 500) console.error(error)
  const detail = `Request ${index} of the batch (${request.method} ${request.path}) failed, so nothing of the batch was stored: ${error.detail}`
  return new HttpError(error.status, detail, error.headers, { index })
}

/** One request, through the dispatch, with its body and headers as the batch gives them. */
async function runOne(context: Context, dispatch: Dispatch, documents: Documents, request: BatchRequest, target: string, body: unknown): Promise<SubResponse> {
  const headers: Record<string, string> = { ...request.headers }
  // Each request is the batch's caller's (docs/accounts.md): it carries the batch's credentials.
  if (context.requestHeaders.authorization !== undefined) headers.authorization = context.requestHeaders.authorization
  if (body !== undefined) headers['content-type'] ??= 'application/json'
  const answer = await dispatch({
    ...context,
    method: request.method,
    path: splitPath(target, context.settings.pathLimits),
    target: context.base + target,
    params: Object.create(null),
    query: queryOf(target),
    requestHeaders: headers,
    body: givenBody(body === undefined ? '' : JSON.stringify(body), headers['content-type'], context.settings.bodyLimits),
    headers: [],
    documents,
  })
  return subResponseOf(answer)
}

/** An answer as a batch's response: its status, its headers with the body's type, and the body as JSON. */
function subResponseOf(answer: Answer): SubResponse {
  const headers: Record<string, string> = { ...answer.headers }
  let body: unknown = null
  if (answer.body !== undefined) {
    headers['Content-Type'] = JSON_TYPE
    const text = answer.body.toString()
    try {
      if (text !== '') body = JSON.parse(text)
    } catch {
      body = text
    }
  }
  return { status: answer.status, headers, body }
}

/** The id of what a request made: its first write's node (a POST's new document), as the document holds it. */
function idOf(ops: readonly BatchOp[]): string | number | undefined {
  const write = ops.find((op) => op.kind === 'write')
  if (!write || write.kind !== 'write' || write.path.length === 0) return undefined
  const name = write.path[write.path.length - 1]
  const id = write.doc.id
  return (typeof id === 'number' || typeof id === 'string') && String(id) === name ? id : name
}

function placeholderValue(text: string, made: readonly (string | number | undefined)[], index: number): string | number | undefined {
  const match = PLACEHOLDER.exec(text)
  if (!match) return undefined
  const source = Number(match[1])
  if (source >= index) throw new HttpError(400, `"${text}" names request ${source}, which does not come before this one; a placeholder names an earlier request.`)
  const id = made[source]
  if (id === undefined) throw new HttpError(400, `"${text}" names request ${source}, which made no document.`)
  return id
}

/** The path with each `$N.id` segment replaced by the id request N made. */
function resolvePath(path: string, made: readonly (string | number | undefined)[], index: number): string {
  const query = path.indexOf('?')
  const part = query === -1 ? path : path.slice(0, query)
  const resolved = part.split('/').map((segment) => {
    const id = placeholderValue(segment, made, index)
    return id === undefined ? segment : encodeURIComponent(String(id))
  })
  return resolved.join('/') + (query === -1 ? '' : path.slice(query))
}

/**
 * The body with each string that is a whole `$N.id` replaced by the id
 * request N made; every key is defined as data, `__proto__` too, as a body
 * sent alone is kept (lib/json/values.ts, defineValue).
 */
function resolveValues(value: unknown, made: readonly (string | number | undefined)[], index: number): unknown {
  if (typeof value === 'string') return placeholderValue(value, made, index) ?? value
  if (Array.isArray(value)) return value.map((item) => resolveValues(item, made, index))
  if (isObject(value)) {
    const copy: JsonObject = {}
    for (const [name, item] of Object.entries(value)) defineValue(copy, name, resolveValues(item, made, index))
    return copy
  }
  return value
}

/** The batch's requests, each checked for its shape; 400 (or 413 past the limit) says what is wrong. */
function parseBatch(body: JsonObject): BatchRequest[] {
  const extra = Object.keys(body).filter((name) => name !== 'requests')
  if (extra.length > 0) throw new HttpError(400, `A batch body has one member, "requests"; ${JSON.stringify(extra[0])} is not one.`)
  const { requests } = body
  if (!Array.isArray(requests)) throw new HttpError(400, 'A batch body is {"requests": [...]}: an array of requests, each {"method", "path", "body", "headers"}.')
  if (requests.length === 0) throw new HttpError(400, 'A batch needs at least one request.')
  if (requests.length > MAX_BATCH_REQUESTS) {
    throw new HttpError(413, `A batch holds at most ${MAX_BATCH_REQUESTS} requests; this one has ${requests.length}. Split it.`)
  }
  return requests.map((request, index) => {
    try {
      return parseRequest(request)
    } catch (error) {
      const problem = toHttpError(error)
      throw new HttpError(problem.status, `Request ${index} of the batch: ${problem.detail}`, {}, { index })
    }
  })
}

function parseRequest(request: unknown): BatchRequest {
  if (!isObject(request)) throw new HttpError(400, 'a request is an object {"method", "path", "body", "headers"}.')
  const extra = Object.keys(request).filter((name) => !['method', 'path', 'body', 'headers'].includes(name))
  if (extra.length > 0) throw new HttpError(400, `${JSON.stringify(extra[0])} is not a member of a request; it has "method", "path", "body" and "headers".`)
  const { method, path, body, headers = {} } = request
  if (typeof method !== 'string' || !METHODS.has(method)) {
    throw new HttpError(400, `"method" is one of PUT, POST, PATCH and DELETE, not ${JSON.stringify(method)}.`)
  }
  if (typeof path !== 'string' || !path.startsWith('/')) throw new HttpError(400, `"path" is a path below the API root starting with "/", not ${JSON.stringify(path)}.`)
  if (path.includes('#')) throw new HttpError(400, `"path" has no fragment: ${JSON.stringify(path)}.`)
  for (const name of queryOf(path).keys()) {
    if (RESERVED.includes(name)) throw new HttpError(400, `"path" may not use ${name}, which a batch cannot hold.`)
  }
  if (!isObject(headers)) throw new HttpError(400, '"headers" is an object of header names and string values.')
  const kept: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) {
    if (!HEADERS.has(name.toLowerCase())) throw new HttpError(400, `the header ${JSON.stringify(name)} means nothing inside a batch; a request may send If-Match, If-None-Match and Content-Type.`)
    if (typeof value !== 'string') throw new HttpError(400, `the header ${JSON.stringify(name)} has a string value.`)
    kept[name.toLowerCase()] = value
  }
  // A JSON Patch (docs/http-api.md, "PATCH") is an array of operations; every other body is an object.
  const jsonPatch = method === 'PATCH' && /^application\/json-patch\+json\s*(;|$)/i.test(kept['content-type'] ?? '')
  if (body !== undefined && !isObject(body) && !(jsonPatch && Array.isArray(body))) {
    throw new HttpError(400, '"body" is a JSON object (a document or a merge patch), or the array of a JSON Patch sent with "Content-Type": "application/json-patch+json".')
  }
  return { method, path, body, headers: kept }
}
