import path from 'node:path'
import { FileStore, MissingPgError, redactUrl, type Store } from '../store/index.ts'
import { isPostgresUrl, openStore } from '../store/open.ts'
import { loadPg } from '../store/postgres/pg.ts'
import { firstMissingFolder, removeEmptyFolders } from '../store/file/folder.ts'
import { defaultOf, optionOf } from './options-table.ts'
import { textOf, switchOn, type Flags } from './args.ts'
import { UsageError } from './usage.ts'

// Every use the command makes of lib/store goes through this file.
export { FileStore, isPostgresUrl, openStore, redactUrl, MissingPgError, firstMissingFolder, removeEmptyFolders, type Store }

export interface StoreChoice {
  /** The folder, resolved, or the postgres:// URL. */
  location: string
  onPostgres: boolean
  /** With a fixture and no store chosen, the store lives in memory: nothing on disk is replaced by a reset. */
  inMemory: boolean
  /** What the banner and messages show of the store: a connection string never with its password. */
  label: string
}

/**
 * Where the store is: --store, else $RESTDIR_STORE (a folder or a URL), else
 * $DATABASE_URL when it is a postgres:// URL (the variable many hosts set), else the default folder.
 */
export function chooseStore(flags: Flags, env: NodeJS.ProcessEnv): StoreChoice {
  const databaseUrl = env.DATABASE_URL && isPostgresUrl(env.DATABASE_URL) ? env.DATABASE_URL : undefined
  const chosen = textOf(flags, 'store') ?? (env.RESTDIR_STORE || databaseUrl)
  const given = chosen ?? String(defaultOf(optionOf('store')))
  const onPostgres = isPostgresUrl(given)
  return {
    location: onPostgres ? given : path.resolve(given),
    onPostgres,
    inMemory: textOf(flags, 'fixture') !== undefined && chosen === undefined,
    label: onPostgres ? redactUrl(given) : path.resolve(given),
  }
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

