import { realpathSync } from 'node:fs'
import { stat } from 'node:fs/promises'
import { join, resolve, sep } from 'node:path'
import type { Doc, NodePath, Store } from '../store/store.ts'
import { isStoreError } from '../store/errors.ts'
import { FileStore } from '../store/file/file-store.ts'
import { isPostgresUrl } from '../store/open.ts'
import { joinPath } from '../path.ts'
import { ImportError } from './import.ts'

/**
 * Moving a store (docs/postgres.md, "Moving a store"): every document of one store
 * copied into another, a folder into PostgreSQL or back, each at the same
 * path. A document arrives as the source answers it (the same JSON, keys in
 * the same order); its ETag stays the same wherever its source kept it in
 * restdir's own form, as every store writes it.
 */
export interface CopyOptions {
  /** Copy into a store that holds documents already: the source's replace those at the same paths, the rest stay. */
  force?: boolean
  /** How messages name the source (a folder, or a URL without its password). */
  sourceLabel?: string
}

export interface CopySummary {
  /** Documents written into the target. */
  documents: number
  /** Of those, documents whose source text was not in restdir's own form (edited by hand): they were written in it, with a new ETag. */
  rewritten: number
}

/** The kind of thing `--import SOURCE` names: a database, a store folder or a json-server db.json. */
export type SourceKind = 'database' | 'folder' | 'db.json'

/** How many reads or writes a copy keeps going at once: enough to keep a database's pool busy, few enough for any disk. */
const WIDTH = 16

/**
 * Copies every document of `source` into `target`. The whole source is read
 * first: a document it cannot give (a broken file, a link, a pipe in a
 * document's place; in a store folder, a link in a node's place too)
 * throws an ImportError naming each, and nothing is written. A target that
 * holds any document is refused unless `force`.
 * The source must not change while it is copied (a store folder is held by
 * its lock; a database, by whoever runs it).
 */
export async function copyStore(source: Store, target: Store, options: CopyOptions = {}): Promise<CopySummary> {
  const what = `The store ${options.sourceLabel ?? ''}`.trimEnd()
  if (source === target) throw new ImportError(['the source is the target; a store cannot be copied into itself.'], what)
  const problems: string[] = []
  let found = 0
  await eachDocument(source, async () => void found++, (path, reason) => problems.push(`${joinPath(path)}: ${reason}.`))
  // A folder's links are in no listing: named here, so that nothing in the folder is left behind without a word.
  if (source instanceof FileStore) for (const path of await source.linkedNodes()) problems.push(`${joinPath(path)}: is a link, which the store does not follow.`)
  if (problems.length > 0) throw new ImportError(problems.sort(), what)
  if (!options.force && found > 0) {
    const held = await heldDocuments(target, 4)
    if (held.length > 0) {
      throw new ImportError([`the target holds documents already (${held.slice(0, 3).join(', ')}${held.length > 3 ? ', …' : ''}). Copy into an empty store, or use --force to merge: the source's documents replace those at the same paths, the others stay.`], what)
    }
  }
  const summary: CopySummary = { documents: 0, rewritten: 0 }
  await eachDocument(
    source,
    async (path, doc, etag) => {
      const written = await target.write(path, doc)
      summary.documents++
      if (written.etag !== etag) summary.rewritten++
    },
    (path, reason) => {
      // Read well a moment ago: the source changed under the copy.
      throw new Error(`${joinPath(path)} of ${options.sourceLabel ?? 'the source'} ${reason} now; the copy stopped after ${summary.documents} documents. Copy again with --force once the source holds still.`)
    },
  )
  return summary
}

/**
 * Calls `onDocument` for every document of the store, at most WIDTH reads at
 * once; a node the store refuses to give (a StoreError of the node itself)
 * goes to `onProblem` with the store's reason. Any other fault (a database
 * out of reach) is thrown.
 */
async function eachDocument(
  store: Store,
  onDocument: (path: NodePath, doc: Doc, etag: string) => Promise<void>,
  onProblem: (path: NodePath, reason: string) => void,
): Promise<void> {
  const limit = limiter(WIDTH)
  const refused = (path: NodePath, error: unknown) => {
    if (!isStoreError(error, 'bad-document') && !isStoreError(error, 'blocked-path')) throw error
    onProblem(path, error.reason ?? error.kind)
  }
  const visit = async (path: NodePath): Promise<void> => {
    const [names] = await Promise.all([
      limit(() => store.children(path)).catch((error: unknown) => refused(path, error)),
      limit(async () => {
        const stored = await store.read(path)
        if (stored) await onDocument(path, stored.doc, stored.etag)
      }).catch((error: unknown) => refused(path, error)),
    ])
    // A slice at a time: a collection of a million names never becomes a million promises.
    for (let start = 0; start < (names ?? []).length; start += 256) {
      await Promise.all(names!.slice(start, start + 256).map((name) => visit([...path, name])))
    }
  }
  await visit([])
}

/** The first documents (at most `most`) a store holds, as paths; none for an empty store. */
async function heldDocuments(store: Store, most: number): Promise<string[]> {
  const held: string[] = []
  const visit = async (path: NodePath): Promise<void> => {
    if (await store.read(path)) held.push(joinPath(path))
    for (const name of (await store.children(path)) ?? []) {
      if (held.length >= most) return
      await visit([...path, name])
    }
  }
  await visit([])
  return held
}

/** Runs at most `width` tasks at once; the others wait their turn, first come first served. */
function limiter(width: number): <T>(task: () => Promise<T>) => Promise<T> {
  let active = 0
  const waiting: (() => void)[] = []
  return async (task) => {
    if (active < width) active++
    else await new Promise<void>((resume) => waiting.push(resume)) // the slot is handed over, never freed between
    try {
      return await task()
    } finally {
      const next = waiting.shift()
      if (next) next()
      else active--
    }
  }
}

/** What `--import SOURCE` names; a missing path or one that is neither a folder nor a file throws, saying so. */
export async function sourceKind(source: string): Promise<SourceKind> {
  if (isPostgresUrl(source)) return 'database'
  const info = await stat(source).catch((error: NodeJS.ErrnoException) => {
    throw new Error(`Cannot read ${source}: ${error.code ?? error.message}.`)
  })
  if (info.isDirectory()) return 'folder'
  if (info.isFile()) return 'db.json'
  throw new Error(`${source} is neither a store folder nor a file (a named pipe or a device?); --import reads a folder, a postgres:// URL or a db.json.`)
}

/**
 * Why `source` cannot be copied into the store at `target` (both a folder or
 * a URL): the same folder, one folder inside the other, or the same
 * database and schema. Undefined when they are apart.
 */
export function sameStoreProblem(source: string, target: string): string | undefined {
  if (isPostgresUrl(source) !== isPostgresUrl(target)) return undefined
  if (isPostgresUrl(source)) {
    return databaseOf(source) === databaseOf(target) ? 'the source and the target are the same database; a store cannot be imported into itself' : undefined
  }
  const [from, to] = [realFolder(source), realFolder(target)]
  if (from === to) return 'the source and the target are the same folder; a store cannot be imported into itself'
  if (to.startsWith(from + sep)) return 'the target folder is inside the source folder; pick a target outside it'
  if (from.startsWith(to + sep)) return 'the source folder is inside the target folder; pick a target outside it'
  return undefined
}

/** A folder with its links resolved, as far as it exists (a target may not exist yet). */
function realFolder(folder: string): string {
  const absolute = resolve(folder)
  const rest: string[] = []
  for (let existing = absolute; ; ) {
    try {
      return join(realpathSync(existing), ...rest)
    } catch {
      const parent = resolve(existing, '..')
      if (parent === existing) return absolute
      rest.unshift(existing.slice(parent.length).replace(/^[\\/]/, ''))
      existing = parent
    }
  }
}

/** Host, port, database and schema a connection string reaches: what makes two URLs the same store. */
function databaseOf(url: string): string {
  try {
    const parsed = new URL(url)
    const options = parsed.searchParams.get('options') ?? ''
    const schema = /search_path\s*=\s*([^\s,]+)/.exec(options)?.[1] ?? ''
    const host = parsed.searchParams.get('host') ?? parsed.hostname.toLowerCase()
    return JSON.stringify([host, parsed.port || '5432', decodeURIComponent(parsed.pathname), schema])
  } catch {
    return url
  }
}
