import path from 'node:path'
import { FileStore } from '../store/file/file-store.ts'
import { isJsonFileLocation, isPostgresUrl, openStore } from '../store/open.ts'
import { loadPg, MissingPgError } from '../store/postgres/pg.ts'
import { redactUrl } from '../store/postgres/url.ts'
import type { Store } from '../store/store.ts'
import { firstMissingFolder, removeEmptyFolders } from '../store/file/folder.ts'
import { defaultOf, optionOf } from './options-table.ts'
import { textOf, switchOn, type Flags } from './args.ts'
import { UsageError } from './usage.ts'
import { loadedSourceKind, type LoadedSourceKind } from './source.ts'

// Every use the command makes of lib/store goes through this file.
export { FileStore, isPostgresUrl, openStore, redactUrl, MissingPgError, firstMissingFolder, removeEmptyFolders, type Store }

export interface StoreChoice {
  /** The folder, resolved, or the postgres:// URL. */
  location: string
  onPostgres: boolean
  /** With a fixture and no store chosen, the store lives in memory: nothing on disk is replaced by a reset. */
  inMemory: boolean
  /** A json-server db.json, served as the store it is (docs/json-server.md, "Serving a db.json"). */
  jsonFile: boolean
  /** What the banner and messages show of the store: a connection string never with its password. */
  label: string
  /** A URL or a seed.js: its data is loaded once into a memory store (docs/json-server.md, "A URL or a seed.js"). */
  loaded?: LoadedSourceKind
  /** Nothing named the store: the default folder, which the banner says. */
  byDefault?: boolean
}

/**
 * Where the store is: the one argument (`restdir db.json`) or --store, else
 * $RESTDIR_STORE (a db.json, a folder or a URL), else $DATABASE_URL when it is
 * a postgres:// URL (the variable many hosts set), else the default folder.
 */
export function chooseStore(flags: Flags, positionals: readonly string[], env: NodeJS.ProcessEnv): StoreChoice {
  if (positionals.length > 1) throw new UsageError(`restdir takes one store to serve (a db.json, a folder or a URL), not ${positionals.length}: ${positionals.join(' ')}.`)
  const given = positionals[0]
  if (given !== undefined && textOf(flags, 'store') !== undefined) throw new UsageError(`The store is given twice, as ${given} and as --store; give one.`)
  const databaseUrl = env.DATABASE_URL && isPostgresUrl(env.DATABASE_URL) ? env.DATABASE_URL : undefined
  const chosen = given ?? textOf(flags, 'store') ?? (env.RESTDIR_STORE || databaseUrl)
  const location = chosen ?? String(defaultOf(optionOf('store')))
  const loaded = loadedSourceKind(location)
  if (loaded !== undefined) {
    if (textOf(flags, 'fixture') !== undefined) throw new UsageError(`${location} is loaded into memory already; --fixture is for a store folder or a db.json.`)
    const resolved = loaded === 'url' ? location : path.resolve(location)
    // A URL's password (https://user:secret@host/db.json) is never shown, as a database URL's is not.
    const label = loaded === 'url' ? location.replace(/^(https?:\/\/[^:@/?#]*):[^/?#]*@/i, '$1:***@') : resolved
    return { location: resolved, onPostgres: false, inMemory: true, jsonFile: false, label, loaded }
  }
  const onPostgres = isPostgresUrl(location)
  return {
    location: onPostgres ? location : path.resolve(location),
    onPostgres,
    inMemory: textOf(flags, 'fixture') !== undefined && chosen === undefined,
    jsonFile: !onPostgres && isJsonFileLocation(location),
    label: onPostgres ? redactUrl(location) : path.resolve(location),
    byDefault: chosen === undefined,
  }
}

/**
 * The store as the banner names it (docs/cli.md, "The banner and the request log"): where it is
 * and what kind it is, so a start with no argument says what it serves;
 * undefined for a fixture's memory store.
 */
export function storeLabelOf(store: StoreChoice, madeFile: boolean): string | undefined {
  if (store.loaded === 'url') return `in memory, loaded once from ${store.label} (changes last until restdir stops)`
  if (store.loaded === 'module') return `in memory, the data of ${store.label} (changes last until restdir stops)`
  if (store.inMemory) return undefined
  if (store.jsonFile) {
    const kind = /\.json5$/i.test(store.location) ? 'a db.json5, JSON5' : 'a db.json'
    return `${store.label} (${kind}: every change is written back into it${madeFile ? '; it did not exist, so it was made, empty' : ''})`
  }
  // Named, a folder or a database is as the user gave it; unnamed, the banner says why this folder.
  return store.byDefault ? `${store.label} (the default store folder, one file per document, as no store was named; \`restdir db.json\` serves a db.json)` : store.label
}

/** A PostgreSQL store needs the optional pg package, and makes every commit durable itself. */
export async function checkPostgres(flags: Flags): Promise<void> {
  if (switchOn(flags, 'sync')) throw new UsageError('--sync is for a store folder; PostgreSQL makes every commit durable itself (its own fsync setting).')
  try {
    await loadPg()
  } catch (error) {
    if (!(error instanceof MissingPgError)) throw error
    process.stderr.write(`restdir: ${error.message}\n`)
    process.exit(2)
  }
}

