import { statSync } from 'node:fs'
import { FileStore } from './file/file-store.ts'
import type { NestedFamily } from './families.ts'
import { MemoryStore } from './memory.ts'
import { isPostgresUrl } from './postgres/url.ts'
import type { Store } from './store.ts'

export { isPostgresUrl }

/**
 * Where a store is (docs/storage.md, "Where the data goes"; docs/postgres.md, "Running on PostgreSQL";
 * docs/json-server.md, "Serving a db.json"): a PostgreSQL database (a
 * postgres:// or postgresql:// URL), a json-server db.json (a path ending in
 * `.json` or `.json5` that is a file or does not exist yet), a folder (any other path),
 * or memory (nothing on disk; a fixture's store).
 */
export type StoreLocation = string | { memory: true }

/** What each kind of store takes; a kind ignores what is not its own. */
export interface OpenStoreOptions {
  /** A folder: flush every write to disk before acknowledging it (FileStoreOptions). */
  sync?: boolean
  /** A database: how many recent changes it keeps for clients that come back (PostgresStoreOptions). */
  changeWindow?: { maxChanges: number; maxBytes: number }
  /** A database or a db.json: where it says what the operator should know (default standard error). */
  log?: (line: string) => void
  /** A db.json: the declared families whose members nest their children's arrays (JsonFileStoreOptions). */
  families?: readonly NestedFamily[]
  /** A db.json: the field naming a plain collection's items (JsonFileStoreOptions). */
  idField?: string
  /** A db.json: read and written as json-server 1.0 does (JsonFileStoreOptions). */
  asJsonServer1?: boolean
}

/**
 * The one place a location becomes a store: resolves once the store can serve, rejects as the store's own `open` does.
 * The PostgreSQL and db.json stores are imported here, when a location asks for one, so that a run loads only
 * the store it serves (docs/speed.md, "Start-up").
 */
export async function openStore(location: StoreLocation, options: OpenStoreOptions = {}): Promise<Store> {
  if (typeof location !== 'string') return new MemoryStore()
  if (isPostgresUrl(location)) {
    const { PostgresStore } = await import('./postgres/postgres-store.ts')
    return PostgresStore.open(location, { changeWindow: options.changeWindow, log: options.log })
  }
  if (isJsonFileLocation(location)) {
    const { JsonFileStore } = await import('./json-file/json-file-store.ts')
    return JsonFileStore.open(location, { sync: options.sync, log: options.log, families: options.families, idField: options.idField, asJsonServer1: options.asJsonServer1 })
  }
  return FileStore.open(location, { sync: options.sync })
}

/** A path ending in `.json` (or `.json5`) that is not a folder: a db.json, served as the store it is (made when missing). */
export function isJsonFileLocation(location: string): boolean {
  return /\.json5?$/i.test(location) && !isPostgresUrl(location) && statSync(location, { throwIfNoEntry: false })?.isDirectory() !== true
}
