import { stat } from 'node:fs/promises'
import { NothingStored, type Documents } from './documents.ts'
import type { Doc, NodePath, Store } from '../store/store.ts'
import { openStore } from '../store/open.ts'
import type { Family } from './declarations.ts'

/**
 * Resetting between tests (docs/http-api.md, "Resetting between tests"): the store
 * starts from a fixture and goes back to it on `POST /?_reset` or
 * `handler.reset()`. The fixture is read once, at start, into memory: a
 * reset never reads the fixture again, and the ids a db.json left for
 * restdir to make are the same after every reset.
 */
export interface Fixture {
  /** Where it came from (a db.json or a store folder), for messages. */
  source: string
  /** How many documents it holds. */
  size: number
  /** The fixture as a tree of nodes, from the root. */
  root: FixtureNode
}

/** A node of the fixture: its document (and that document as compact JSON, as the store answers it) and its children. */
interface FixtureNode {
  doc?: Doc
  text?: string
  children: Map<string, FixtureNode>
}

export interface ResetSummary {
  /** Documents the fixture holds. */
  documents: number
  /** Documents written back (changed, removed or broken since). */
  written: number
  /** Nodes removed (not in the fixture), each with its subtree. */
  removed: number
  /** Milliseconds the reset took. */
  ms: number
}

/** Reads a fixture: a json-server db.json (imported by the rules of `--import`) or a store folder. */
export async function loadFixture(source: string, families?: readonly Family[]): Promise<Fixture> {
  const info = await stat(source).catch((error: NodeJS.ErrnoException) => {
    throw new Error(`Cannot read the fixture ${source}: ${error.code ?? error.message}.`)
  })
  if (info.isDirectory()) {
    const store = await openStore(source)
    try {
      return await fixtureOf(source, store)
    } finally {
      await store.close()
    }
  }
  const store = await openStore({ memory: true })
  // The importer (and its db.json reader) loads only for a db.json fixture (docs/speed.md, "Start-up").
  const { importDatabaseFile } = await import('./import.ts')
  await importDatabaseFile(store, source, { families })
  return fixtureOf(source, store)
}

async function fixtureOf(source: string, store: Store): Promise<Fixture> {
  const fixture: Fixture = { source, size: 0, root: { children: new Map() } }
  const visit = async (path: NodePath, node: FixtureNode): Promise<void> => {
    const stored = await store.read(path)
    if (stored) {
      node.doc = stored.doc
      node.text = JSON.stringify(stored.doc)
      fixture.size++
    }
    for (const name of (await store.children(path)) ?? []) {
      const child: FixtureNode = { children: new Map() }
      node.children.set(name, child)
      await visit([...path, name], child)
    }
  }
  await visit([], fixture.root)
  return fixture
}

/**
 * Puts the store back to the fixture through the data layer, so event
 * streams hear it as they hear any change. Only what differs is touched: a
 * node the fixture does not have is removed (a `delete` event), a document
 * that differs from the fixture's is written again (a `put`); the rest is only
 * read, which keeps a reset after a test that changed little fast. Resets run
 * one at a time; requests that arrive during one may see the store half way.
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
  const summary: ResetSummary = { documents: fixture.size, written: 0, removed: 0, ms: 0 }
  const remove = (path: NodePath) =>
    documents.remove(path).then(
      () => void summary.removed++,
      (error: unknown) => {
        if (!(error instanceof NothingStored)) throw error // gone meanwhile is what a reset wants
      },
    )
  const visit = async (path: NodePath, node: FixtureNode): Promise<void> => {
    // A broken document file reads as different: writing it again repairs it.
    let [current, names] = await Promise.all([documents.readText(path).catch(() => undefined), documents.children(path)])
    if (node.text === undefined && current && path.length > 0) {
      // A document where the fixture has none: the node goes, and its subtree is written again.
      await remove(path)
      names = undefined
    }
    if (node.text !== undefined && current?.json !== node.text) {
      await documents.write(path, () => node.doc as Doc)
      summary.written++
    }
    for (const name of names ?? []) if (!node.children.has(name)) await remove([...path, name])
    await inBatches([...node.children], ([name, child]) => visit([...path, name], child))
  }
  await visit([], fixture.root)
  summary.ms = performance.now() - started
  return summary
}

/** Runs `task` on every item, at most 64 at a time: parallel enough for the disk, no descriptor storm. */
async function inBatches<T>(items: T[], task: (item: T) => Promise<void>): Promise<void> {
  for (let start = 0; start < items.length; start += 64) await Promise.all(items.slice(start, start + 64).map(task))
}
