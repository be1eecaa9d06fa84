import { StoreError } from './errors.ts'
import type { Claim } from './node-locks.ts'
import type { Doc, NodePath, Store, WriteConditions } from './store.ts'

/*
 * What a write or removal requires of the present (WriteConditions), as the
 * stores of one process check it: inside their critical section, whose
 * claims (lib/store/node-locks.ts) are made here too, so that nothing the checks
 * read can change before the write lands.
 */

/** The claims a write holds while it checks its conditions and lands. */
export function writeClaims(path: NodePath, conditions: WriteConditions | undefined): Claim[] {
  const claims: Claim[] = [{ kind: 'write', path }]
  if (conditions?.owner) claims.push({ kind: 'keep', path: conditions.owner })
  if (conditions?.unique) claims.push({ kind: 'unique', path: conditions.unique.among })
  return claims
}

/** The reads the checks need; `etagOf`, where a store has it, reads a version without parsing its document. */
type Reader = Pick<Store, 'read' | 'children'> & VersionReader
type VersionReader = Pick<Store, 'read'> & { etagOf?(path: NodePath): Promise<string | undefined> }

/** Throws the StoreError of a condition that does not hold (see WriteConditions); `doc` is the document about to be written. */
export async function checkConditions(store: Reader, path: NodePath, doc: Doc, conditions: WriteConditions | undefined): Promise<void> {
  if (!conditions) return
  const refusal = await ownerOrUniqueRefusal(store, path, doc, conditions)
  if (refusal) throw refusal
  if (conditions.expect !== undefined) await checkVersion(store, path, conditions.expect)
}

/**
 * The refusal a write would meet now for its `owner` ('owner-missing') or its
 * `unique` value ('taken', naming the holder), if any. Also read outside a
 * store's critical section, to tell a client why a write would fail anyway.
 */
export async function ownerOrUniqueRefusal(store: Reader, path: NodePath, doc: Doc, conditions: WriteConditions): Promise<StoreError | undefined> {
  if (conditions.owner && !(await store.read(conditions.owner))) return new StoreError('owner-missing', path)
  const unique = conditions.unique
  if (!unique || !Object.hasOwn(doc, unique.field)) return undefined
  const holder = await holderOf(store, path, unique.among, unique.field, JSON.stringify(doc[unique.field]))
  return holder === undefined ? undefined : new StoreError('taken', path, holder)
}

/** Compare-and-set: the node's document must still have the ETag `expect` (`null`: hold no document). */
export async function checkVersion(store: VersionReader, path: NodePath, expect: string | null): Promise<void> {
  const current = store.etagOf ? await store.etagOf(path) : (await store.read(path))?.etag
  if ((current ?? null) !== expect) throw new StoreError('version-changed', path)
}

/** The name of a child of `among`, other than the node written, whose document holds `field` with this JSON text. */
async function holderOf(store: Reader, path: NodePath, among: NodePath, field: string, text: string): Promise<string | undefined> {
  const self = path.length === among.length + 1 && among.every((segment, index) => path[index] === segment) ? path[among.length] : undefined
  for (const name of (await store.children(among)) ?? []) {
    if (name === self) continue
    // A broken document holds no value that anyone could be refused for.
    const stored = await store.read([...among, name]).catch(() => undefined)
    if (stored && Object.hasOwn(stored.doc, field) && JSON.stringify(stored.doc[field]) === text) return name
  }
  return undefined
}
