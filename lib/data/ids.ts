import type { Doc, NodePath, Store, WriteConditions } from '../store/store.ts'
import { newId } from '../store/new-id.ts'

/**
 * Stores a new child of `parent` under a new id: `makeDoc` builds the document
 * for an id. An id can only be taken already if the clock went back since an
 * earlier run: then the next one is tried.
 */
export async function createWithNewId(
  store: Store,
  parent: NodePath,
  makeDoc: (id: string) => Doc,
  conditions?: Omit<WriteConditions, 'expect' | 'patch'>,
): Promise<{ id: string; path: NodePath; doc: Doc; etag: string }> {
  for (;;) {
    const id = newId()
    const path = [...parent, id]
    const doc = makeDoc(id)
    const created = await store.create(path, doc, conditions)
    if (created) return { id, path, doc, etag: created.etag }
  }
}

/** A path segment that is an integer as JSON writes it: `0`, `7`, `42`; not `07`, `-1` or `1e3`. */
const INTEGER_SEGMENT = /^(?:0|[1-9]\d{0,14})$/

/**
 * The next id json-server 0.17 would give a new child of `parent`
 * (docs/json-server.md, "The json-server mode"): 1 in an empty collection, one
 * more than the greatest when every child's name is an integer and that
 * child's `id` is a number, as json-server's own integer ids are. Undefined
 * when the collection's ids are not integers: new ids are then restdir's own.
 * Only names are read, and the one document of the greatest.
 */
export async function nextIntegerId(store: Store, parent: NodePath): Promise<number | undefined> {
  const names = (await store.children(parent)) ?? []
  let greatest = 0
  for (const name of names) {
    if (!INTEGER_SEGMENT.test(name)) return undefined
    greatest = Math.max(greatest, Number(name))
  }
  if (names.length === 0) return 1
  const last = await store.read([...parent, String(greatest)])
  if (last !== undefined && typeof last.doc.id !== 'number') return undefined
  return Number.isSafeInteger(greatest + 1) ? greatest + 1 : undefined
}
