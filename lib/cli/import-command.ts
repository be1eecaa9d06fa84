import path from 'node:path'
import { importDatabaseFile } from '../data/import.ts'
import { copyStore, sameStoreProblem, sourceKind } from '../data/copy.ts'
import { FileStore, isPostgresUrl, openStore, redactUrl, MissingPgError, firstMissingFolder, removeEmptyFolders, type Store, type StoreChoice } from './store-choice.ts'
import { UsageError } from './usage.ts'
import type { Family } from '../data/declarations.ts'

/**
 * `--import SOURCE`: loads a json-server database, a store folder or a
 * database (docs/postgres.md, "Moving a store") into the store and exits: 0 when done,
 * 1 when refused, 2 when the source is the store itself.
 */
export async function importAndExit(source: string, target: StoreChoice, force: boolean, sync: boolean, families?: readonly Family[]): Promise<never> {
  const sourceLabel = isPostgresUrl(source) ? redactUrl(source) : path.resolve(source)
  let store: Store | undefined
  let from: Store | undefined
  // A refused import leaves no store folder it made: the next one starts from the same place.
  const madeStore = target.onPostgres || target.jsonFile ? undefined : firstMissingFolder(target.location)
  try {
    const kind = await sourceKind(source)
    const sameStore = kind === 'db.json' ? undefined : sameStoreProblem(source, target.location)
    if (sameStore) throw new UsageError(`--import ${sourceLabel}: ${sameStore}.`)
    // The source first: a folder in use by a server is refused before the target is touched.
    if (kind !== 'db.json') from = await openSource(source)
    store = await openStore(target.location, { sync, families })
    if (from) {
      const summary = await copyStore(from, store, { force, sourceLabel })
      process.stdout.write(`copied ${plural(summary.documents, 'document')} from ${sourceLabel} into ${target.label}\n`)
      if (summary.rewritten > 0) {
        process.stdout.write(`${plural(summary.rewritten, 'document')} of the source ${summary.rewritten === 1 ? 'was' : 'were'} not in restdir's own form (edited by hand?): written in it, with a new ETag\n`)
      }
    } else {
      const summary = await importDatabaseFile(store, source, { force, families })
      process.stdout.write(`imported ${plural(summary.documents, 'document')} (${plural(summary.collections, 'collection')}) from ${source} into ${target.label}\n`)
      for (const name of summary.empty) process.stdout.write(`${JSON.stringify(name)} is an empty array: no collection was created for it\n`)
    }
    await Promise.all([store.close(), from?.close()])
    process.exit(0)
  } catch (error) {
    // A store into itself is found before anything is opened or made: the usage says what to do.
    if (error instanceof UsageError) throw error
    await Promise.all([store?.close().catch(() => {}), from?.close().catch(() => {})])
    if (madeStore !== undefined) await removeEmptyFolders(target.location, madeStore)
    process.stderr.write(`restdir: ${(error as Error).message}\n`)
    process.exit(error instanceof MissingPgError ? 2 : 1)
  }
}

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`
}

/**
 * A database or a store folder to copy from. A folder is held by its lock
 * meanwhile, so no server starts on it, and refused while one runs there.
 */
async function openSource(location: string): Promise<Store> {
  try {
    const source = await openStore(location, { log: () => {} })
    if (source instanceof FileStore) await source.recovery
    return source
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESTORELOCKED') throw error
    throw new Error(`${(error as Error).message.replace(/; stop that one first\.$/, '')}; stop it before importing from the folder, or import from where it serves.`)
  }
}
