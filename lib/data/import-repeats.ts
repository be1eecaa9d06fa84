import type { Doc, NodePath, Store } from '../store/store.ts'
import { isStoreError } from '../store/errors.ts'
import { joinPath } from '../path.ts'

/** An item of a db.json without an id: it goes into `parent` under a new id, stored with it as `idKey`. */
export interface IdlessItem {
  parent: NodePath
  doc: Doc
  idKey: string
}

/**
 * The id-less items an earlier import of the same file put into the store already, so that running
 * `--import db.json` again does not add them twice under new ids (docs/json-server.md, "Importing
 * `db.json`"). An item is matched with a document of its collection that equals it field for field,
 * its id aside (key order and all); each document matches one item at most, so a file that holds an
 * item twice leaves it there twice.
 */
export async function alreadyImported<Item extends IdlessItem>(store: Store, items: readonly Item[]): Promise<Set<Item>> {
  const matched = new Set<Item>()
  const byCollection = new Map<string, Item[]>()
  for (const item of items) {
    const key = joinPath(item.parent)
    byCollection.set(key, [...(byCollection.get(key) ?? []), item])
  }
  for (const group of byCollection.values()) {
    const stored = await storedContents(store, group[0].parent, group[0].idKey)
    if (stored.size === 0) continue
    for (const item of group) {
      const text = JSON.stringify(item.doc)
      const left = stored.get(text) ?? 0
      if (left === 0) continue
      stored.set(text, left - 1)
      matched.add(item)
    }
  }
  return matched
}

/** How many documents of the collection hold each content (as JSON text, without `idKey`). */
async function storedContents(store: Store, parent: NodePath, idKey: string): Promise<Map<string, number>> {
  const counts = new Map<string, number>()
  for (const name of (await store.children(parent)) ?? []) {
    const stored = await store.read([...parent, name]).catch((error: unknown) => {
      if (!isStoreError(error, 'bad-document')) throw error
    })
    if (!stored) continue
    const { [idKey]: _id, ...content } = stored.doc
    const text = JSON.stringify(content)
    counts.set(text, (counts.get(text) ?? 0) + 1)
  }
  return counts
}
