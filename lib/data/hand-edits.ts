import type { Documents } from './documents.ts'
import type { Store } from '../store/store.ts'
import { FileStore } from '../store/file/file-store.ts'
import { FolderWatch } from '../store/fs/folder-watch.ts'

/*
 * Hand edits of a store folder pushed to the event streams (docs/storage.md, "Editing by hand"):
 * a document file a person saves, adds or removes reaches every open stream within a second, as
 * the change it made, with no other request. The folder's one watch (folder-watch.ts: a watch on
 * each folder, at most MAX_WATCHED_FOLDERS) says that something changed; the store is then walked
 * (its children and one stat of each document file, Store.documentVersions) and compared with the
 * last walk. A document the server itself wrote or removed since (its change feed said so) is the
 * server's change, already told. The watch is kept only while a stream is open (looked for every
 * CHECK_MS): no stream, no watch, no walks, and the server's own changes are not heard either.
 */

/** How long after the watch's event the folder is walked: a save is often several events. */
const SETTLE_MS = 50
/** A folder too big to watch is not tried again for this long (each try walks up to MAX_WATCHED_FOLDERS folders). */
const RETRY_MS = 60_000
/** How often it is looked whether a stream has opened (the watch is then made) or the last has closed (it goes): a boolean's cost. */
const CHECK_MS = 100

/** Starts pushing the hand edits of `documents`' store folder while `listened()`; returns what stops it. None for other stores. */
export function pushHandEdits(documents: Documents, listened: () => boolean): () => void {
  const store = documents.storeFolder
  if (!(store instanceof FileStore)) return () => {}
  let watch: FolderWatch | undefined
  /** Each document's version at the last walk, by its path as JSON. */
  let known: Map<string, string> | undefined
  /** Paths the server changed since the last walk began. */
  let served = new Set<string>()
  let timer: NodeJS.Timeout | undefined
  let walking = false
  let stopped = false
  let retryAt = 0
  /** Stops hearing the server's own changes: they are only heard while watched, so that no write is remembered for a walk that never comes. */
  let unsubscribe = () => {}

  const drop = () => {
    const dropped = watch
    watch = undefined
    known = undefined
    unsubscribe()
    unsubscribe = () => {}
    served = new Set()
    dropped?.close()
  }
  const walkSoon = () => {
    if (timer !== undefined || stopped) return
    timer = setTimeout(() => {
      timer = undefined
      void walk()
    }, SETTLE_MS)
    timer.unref()
  }
  const walk = async (): Promise<void> => {
    if (walking) return walkSoon()
    walking = true
    try {
      if (!watch || stopped) return
      // A change forgets the watch (folder-watch.ts): armed again before the walk, so nothing after it is missed.
      // A folder that went while it was walked is walked again at once; one too big stays unwatchable (folder-watch.ts).
      if (!watch.arm() && !watch.arm()) {
        retryAt = Date.now() + RETRY_MS
        return drop()
      }
      const before = served
      served = new Set()
      const watching = watch
      const now = await versionsOf(store)
      if (known !== undefined) await tell(store, known, now, (key) => before.has(key) || served.has(key))
      // A watch dropped meanwhile heard none of the server's changes since: its walk leaves the next watch nothing to compare with.
      if (watch === watching) known = now
    } catch {
      drop() // the folder could not be walked (gone, unreadable): tried again at the next check
    } finally {
      walking = false
    }
  }
  const check = setInterval(() => {
    if (!listened()) return drop()
    if (watch || Date.now() < retryAt) return
    watch = new FolderWatch(store.dir)
    unsubscribe = store.subscribe((change) => served.add(JSON.stringify(change.path)))
    watch.onChange(() => watch && walkSoon())
    void walk()
  }, CHECK_MS)
  check.unref()
  return () => {
    stopped = true
    clearInterval(check)
    clearTimeout(timer)
    drop()
  }
}

/** Tells the feed of each document that changed between two walks, unless the server changed it itself. */
async function tell(store: FileStore, before: Map<string, string>, after: Map<string, string>, served: (key: string) => boolean): Promise<void> {
  // The server's change of a node covers what lies below it (a removal takes the subtree). Each is asked
  // under the node's lock (FileStore.reportHandEdit): a write the walk saw has told the feed by then.
  const byServer = (path: string[]) => served('[]') || path.some((_, end) => served(JSON.stringify(path.slice(0, end + 1))))
  for (const [key, version] of after) {
    if (before.get(key) === version) continue
    const path = JSON.parse(key) as string[]
    await store.reportHandEdit(path, async () => {
      if (byServer(path)) return undefined
      const stored = await store.read(path).catch(() => undefined)
      return stored && { type: 'put', path, data: stored.doc }
    })
  }
  for (const key of before.keys()) {
    if (after.has(key)) continue
    const path = JSON.parse(key) as string[]
    await store.reportHandEdit(path, async () => (byServer(path) ? undefined : { type: 'delete', path, data: null }))
  }
}

/** Every document's version below the root, by its path as JSON: the children of each node, one stat a document. */
async function versionsOf(store: Store): Promise<Map<string, string>> {
  const versions = new Map<string, string>()
  const visit = async (path: string[]): Promise<void> => {
    const names = (await store.children(path)) ?? []
    const tokens = store.documentVersions?.(path, names) ?? []
    for (const [index, name] of names.entries()) {
      const child = [...path, name]
      if (tokens[index] !== undefined) versions.set(JSON.stringify(child), tokens[index]!)
      await visit(child)
    }
  }
  await visit([])
  return versions
}
