import path from 'node:path'
import { FileStore } from '../store/file/file-store.ts'
import { MemoryStore } from '../store/memory.ts'
import { isJsonFileLocation, type StoreLocation } from '../store/open.ts'
import { isPostgresUrl } from '../store/postgres/url.ts'
import type { Store } from '../store/store.ts'
import { isLoopbackHost } from '../http/guards.ts'

/**
 * What the playground may say about where documents go (docs/cli.md, "The playground
 * form: `--prefix /api`"): the store's kind, on every static answer, and its folder or
 * db.json by name, to a client on the server's own machine only. A name is the
 * location relative to the folder the server started in; one outside it is reduced
 * to its last part, so no answer holds an absolute path. A database is never named:
 * its URL may hold a password.
 */
export type StoreKind = 'folder' | 'json-file' | 'memory' | 'postgres' | 'other'

export interface StoreDescription {
  kind: StoreKind
  /** The folder or db.json, as the playground shows it. */
  name?: string
}

/** The kind and name of a store given as createHandler opens it. */
export function describeStore(store: StoreLocation | Store, cwd = process.cwd()): StoreDescription {
  if (typeof store === 'string') {
    if (isPostgresUrl(store)) return { kind: 'postgres' }
    return { kind: isJsonFileLocation(store) ? 'json-file' : 'folder', name: shownName(store, cwd) }
  }
  if (store instanceof FileStore) return { kind: 'folder', name: shownName(store.dir, cwd) }
  // The db.json and PostgreSQL stores are told by their own fields, not their classes, which load only when a run uses them (docs/speed.md, "Start-up").
  if ('memory' in store || store instanceof MemoryStore) return { kind: 'memory' }
  const file = fieldOf(store, 'file')
  if (store.resources !== undefined && typeof file === 'string') return { kind: 'json-file', name: shownName(file, cwd) }
  const location = fieldOf(store, 'location')
  if (typeof location === 'string' && isPostgresUrl(location)) return { kind: 'postgres' }
  return { kind: 'other' }
}

function fieldOf(store: Store, name: string): unknown {
  return (store as unknown as Record<string, unknown>)[name]
}

/** `X-Restdir-Store: folder; name="store"`: the name (percent-encoded, so any byte fits a header) only for a loopback client. */
export function storeHeaderValue(description: StoreDescription, remoteAddress: string | undefined): string {
  const named = description.name !== undefined && remoteAddress !== undefined && isLoopbackHost(remoteAddress)
  return named ? `${description.kind}; name="${encodeURIComponent(description.name!)}"` : description.kind
}

function shownName(location: string, cwd: string): string {
  const relative = path.relative(cwd, path.resolve(cwd, location))
  if (relative === '') return '.'
  const outside = relative === '..' || relative.startsWith('..' + path.sep) || path.isAbsolute(relative)
  return outside ? path.basename(location) : relative.split(path.sep).join('/')
}
