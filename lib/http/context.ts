import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Documents, Preconditions } from '../data/documents.ts'
import type { Params } from './router.ts'
import type { NodePath } from '../store/store.ts'
import type { Settings } from './settings.ts'
import { joinPath } from '../path.ts'
import { writePreconditions } from './conditional.ts'

/** Everything a resource handler needs to answer one request. */
export interface Context {
  req: IncomingMessage
  res: ServerResponse
  method: string
  /** Decoded path segments below the API base. */
  path: NodePath
  /** The API base as clients reach it: mount path (Express, Connect) and prefix; `` at the root. */
  base: string
  params: Params
  query: URLSearchParams
  /**
   * Headers every answer to this request carries (CORS), as names and values
   * in turn; respond.ts writes them with the answer, other writers apply them first.
   */
  headers: string[]
  documents: Documents
  settings: Settings
}

export type RouteHandler = (context: Context) => Promise<void>

/** The URL path of a node as clients reach it, with the mount path and the API prefix. */
export function urlOf(context: Context, path: NodePath): string {
  return context.base + joinPath(path)
}

/** The check a write runs on the version it replaces, from If-Match and If-None-Match; undefined when the request has neither. */
export function preconditionsOf(context: Context): Preconditions | undefined {
  return writePreconditions(context.req.headers)
}
