import type { BodyLimits } from './body.ts'
import type { GuardSettings } from './guards.ts'
import type { PathLimits } from '../path.ts'
import type { ListingLimits } from '../listing/filters.ts'
import type { ChangeWindow } from '../data/changes.ts'
import type { Family } from '../data/declarations.ts'
import type { RewriteRule } from '../middleware/rewrite.ts'
import type { Middleware } from '../middleware/middlewares.ts'

/** What a server runs by: its options resolved, every default applied (lib/options.ts, resolveSettings). */
export interface Settings {
  /** The static folders, in the order they are looked in. */
  www: string[]
  wwwCache: { maxBytes: number; maxFileBytes: number } | false
  prefix: string
  /** The fixture's path, when resets are on. */
  fixture?: string
  sync: boolean
  /** The declared resource families, parents before their children (lib/data/declarations.ts). */
  families: readonly Family[]
  delay: number
  /** json-server 0.17's URL semantics (lib/options.ts, jsonServerModeFor). */
  jsonServer: boolean
  /** Which json-server the mode answers as (lib/options.ts, jsonServerVersionOf). */
  jsonServerVersion: '0.17' | '1'
  /** The field naming a collection's items in the json-server mode (`id`), json-server's `--id`. */
  idField: string
  /** What follows a singular name in a foreign key (`Id`: `postId`), json-server's `--foreignKeySuffix`. */
  foreignKeySuffix: string
  bodyLimits: BodyLimits
  pathLimits: PathLimits
  listingLimits: ListingLimits
  guards: GuardSettings
  timeouts: Timeouts
  maxStreams: number
  changeWindow: ChangeWindow
  maxStreamBuffer: number
  log?: (line: string) => void
  /** json-server's rewrite rules, in order (lib/middleware/rewrite.ts); none: nothing is rewritten. */
  rewrites: readonly RewriteRule[]
  /** Accounts and access rules (docs/accounts.md): json-server-auth's flow on a db.json, the declared families elsewhere. */
  auth: boolean
  /** The secret that signs the accounts' tokens when given; else the store's own (lib/auth/secret.ts). */
  authSecret?: string
  /** Under `auth` on the declared families, the administrator's key (`--token`): it may do everything (docs/accounts.md, "The declared families"). */
  adminToken?: string
  /** The user's own middlewares, run in order before the data API (lib/middleware/middlewares.ts). */
  middlewares: readonly Middleware[]
}

export interface Timeouts {
  /** Milliseconds to receive the request headers, and the whole request (node:http's headersTimeout, requestTimeout). */
  headers: number
  request: number
}
