import { stat } from 'node:fs/promises'
import type { Context } from './context.ts'
import type { Documents } from './documents.ts'
import type { Doc, NodePath, Store } from './store/store.ts'
import { FileStore, MemoryStore } from './store/index.ts'
import { importDatabaseFile } from './import.ts'
import { HttpError } from './errors.ts'
import { isLoopbackHost } from './guards.ts'
import { sendJson, sendNoContent } from './respond.ts'

/**
 * Resetting between tests (README, "Resetting between tests"): the store
 * starts from a fixture and goes back to it on `POST /?_reset` or
 * `handler.reset()`. The fixture is read once, at start, into a list of
 * documents: a reset never reads the fixture again, and the ids a db.json
 * left for restdir to make are the same after every reset.
 */
export interface Fixture {
  /** Where it came from (a db.json or a store folder), for messages. */
  source: string
  /** Every document of the fixture, parents before children. */
  documents: { path: NodePath; doc: Doc }[]
}

export interface ResetSummary {
  /** Documents written back. */
  documents: number
  /** Milliseconds the reset took. */
  ms: number
}

/** Reads a fixture: a json-server db.json (imported by the rules of `--import`) or a store folder. */
export async function loadFixture(source: string): Promise<Fixture> {
  const info = await stat(source).catch((error: NodeJS.ErrnoException) => {
    throw new Error(`Cannot read the fixture ${source}: ${error.code ?? error.message}.`)
  })
  if (info.isDirectory()) {
    const store = await FileStore.open(source)
    try {
      return { source, documents: await documentsOf(store) }
    } finally {
      await store.close()
    }
  }
  const store = new MemoryStore()
  await importDatabaseFile(store, source)
  return { source, documents: await documentsOf(store) }
}

/** Every document of a store, depth first, parents before children. */
async function documentsOf(store: Store, path: NodePath = [], found: { path: NodePath; doc: Doc }[] = []): Promise<{ path: NodePath; doc: Doc }[]> {
  const stored = await store.read(path)
  if (stored) found.push({ path, doc: stored.doc })
  for (const name of (await store.children(path)) ?? []) await documentsOf(store, [...path, name], found)
  return found
}

/**
 * Puts the store back to the fixture through the data layer, so event
 * streams hear it as they hear any change: a `delete` for each top-level
 * node, then a `put` for each document of the fixture. Resets run one at a
 * time; requests that arrive during one may see the store half way.
 */
export function resetter(fixture: Fixture, documentsOf: () => Documents): () => Promise<ResetSummary> {
  let running: Promise<unknown> = Promise.resolve()
  return () => {
    const turn = running.then(() => resetTo(documentsOf(), fixture))
    running = turn.catch(() => {})
    return turn
  }
}

async function resetTo(documents: Documents, fixture: Fixture): Promise<ResetSummary> {
  const started = performance.now()
  for (const name of (await documents.store.children([])) ?? []) {
    await documents.remove([name]).catch((error: unknown) => {
      if (!(error instanceof HttpError && error.status === 404)) throw error // gone meanwhile is what we want
    })
  }
  // Writes to distinct nodes, in bounded batches: parallel enough for the disk, no descriptor storm.
  const list = fixture.documents
  for (let start = 0; start < list.length; start += 64) {
    await Promise.all(list.slice(start, start + 64).map(({ path, doc }) => documents.write(path, () => doc)))
  }
  return { documents: list.length, ms: performance.now() - started }
}

/**
 * `POST /?_reset` on the API root. The query is reserved there (as `?_children`
 * is): without a fixture the answer is a 404, never a new document. The write
 * guards (--readonly, --token) have run already; on a server reachable from
 * other machines a reset also needs a token, so a stray request cannot wipe it.
 */
export async function answerReset(context: Context, reset: (() => Promise<ResetSummary>) | undefined): Promise<void> {
  const { method, settings } = context
  const allow = settings.guards.readonly ? 'OPTIONS' : 'POST, OPTIONS'
  if (method === 'OPTIONS') return sendNoContent(context, { Allow: allow })
  if (method !== 'POST') throw new HttpError(405, `${method} /?_reset is not allowed; a reset is a POST.`, { Allow: allow })
  if (!reset) {
    throw new HttpError(404, 'Resetting is off: this server was started without a fixture. Start it with --fixture db.json (or a store folder) to reset with POST /?_reset.')
  }
  const bound = settings.guards.host ?? context.req.socket.localAddress
  if (settings.guards.token === undefined && (bound === undefined || !isLoopbackHost(bound))) {
    throw new HttpError(403, 'This server is reachable from other machines, so a reset needs the write token: start it with --token and send "Authorization: Bearer <token>".')
  }
  const summary = await reset()
  sendJson(context, 200, { reset: true, documents: summary.documents, ms: Math.round(summary.ms * 10) / 10 })
}
