import type { IncomingHttpHeaders, ServerResponse } from 'node:http'
import type { Documents, Preconditions } from '../data/documents.ts'
import type { Params } from './router.ts'
import type { NodePath } from '../store/store.ts'
import type { Settings } from './settings.ts'
import type { RequestBody } from './body.ts'
import { joinPath } from '../path.ts'
import { writePreconditions } from './conditional.ts'

/**
 * Everything a resource needs to answer one request, as data: the same for a
 * request from the network and for one inside a batch (lib/handler.ts,
 * dispatch). It holds no request or response object; the body is read
 * through `body`, from the network or as the batch gives it.
 */
export interface Context {
  method: string
  /** Decoded path segments below the API base. */
  path: NodePath
  /** The request target as sent (after rewrites), whose length a new child's URL is held to. */
  target: string
  /** The API base as clients reach it: mount path (Express, Connect) and prefix; `` at the root. */
  base: string
  params: Params
  query: URLSearchParams
  /** The request's headers (lower-case names): preconditions, Accept, Content-Type, Host, Last-Event-ID. */
  requestHeaders: IncomingHttpHeaders
  /** The connection the request came on, as far as resources read it. */
  connection: Connection
  body: RequestBody
  /**
   * Headers every answer to this request carries (CORS), as names and values
   * in turn; respond.ts writes them with the answer, other writers apply them first.
   */
  headers: string[]
  documents: Documents
  settings: Settings
}

/**
 * A TLS connection is `encrypted` (a page link's scheme); `localAddress` is the address it reached (a reset's check),
 * `remoteAddress` the one it came from (login attempts are slowed per address).
 */
export interface Connection {
  readonly encrypted?: boolean
  readonly localAddress?: string
  readonly remoteAddress?: string
}

/**
 * What a resource answers, as data: the network's writer (respond.ts, writeAnswer) sends
 * it, a batch keeps it as one of its responses, an event stream reads a
 * node's value from it. A body is JSON text ending with a newline, or its
 * bytes; 204 and 304 have none. An event stream is written over time: its
 * `stream` runs with the response once the answer is the network's.
 */
export interface Answer {
  status: number
  /** The answer's own headers; the request's (CORS, Context.headers) go before them. */
  headers?: Record<string, string>
  body?: string | Buffer
  /** The body's length in bytes, when it is known already (kept bytes). */
  length?: string
  stream?: (res: ServerResponse, held: readonly string[]) => void
}

/** An answer now, or one on its way: a hot document's is given in the turn it was asked for. */
export type Answering = Answer | Promise<Answer>

/** A resource: its answer to a request, at once when it has it (a hot document), else as a promise. */
export type RouteHandler = (context: Context) => Answering

/** The URL path of a node as clients reach it, with the mount path and the API prefix. */
export function urlOf(context: Context, path: NodePath): string {
  return context.base + joinPath(path)
}

/** The check a write runs on the version it replaces, from If-Match and If-None-Match; undefined when the request has neither. */
export function preconditionsOf(context: Context): Preconditions | undefined {
  return writePreconditions(context.requestHeaders)
}
