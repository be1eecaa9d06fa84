import type { NodePath } from './store.ts'

/**
 * What can go wrong below the store, named without HTTP: the store throws a
 * StoreError with a kind, the node it was working on and, for a broken file,
 * what is wrong with it; the handler layer alone (lib/http/problem.ts
 * `toHttpError`) decides what a client hears. Nothing here holds a file path
 * (a db.json store names its file by its base name, as the user gave it).
 */
export type StoreErrorKind =
  /** One document file is broken: `reason` says how (not JSON, not an object, empty, a directory, a link, a pipe, …). */
  | 'bad-document'
  /** The disk (or the user's quota) is full. */
  | 'disk-full'
  /** The process has no file descriptor left (EMFILE, ENFILE): a moment later it may. */
  | 'out-of-descriptors'
  /** The path is too long for the file system under the store. */
  | 'path-too-long'
  /** The store folder was deleted or moved away under the running server. */
  | 'store-gone'
  /** The store folder cannot be written: a read-only file system, or no permission. */
  | 'read-only'
  /** The node's folder, or one above it, is a link (which the store never follows) or a file. */
  | 'blocked-path'
  /** The database cannot be reached or refuses work for now (PostgresStore): a moment later it may. */
  | 'unavailable'
  /** A write's `expect` did not hold: the node's document is not at the version the write required. */
  | 'version-changed'
  /** A write's `owner` holds no document (it was never there, or was removed first). */
  | 'owner-missing'
  /** A write's `unique` field value is held by another document: `reason` is the holder's name. */
  | 'taken'
  /**
   * The db.json a store is (lib/store/json-file/) was edited by hand into
   * something it cannot hold, or while this write was being saved: `reason`
   * names the file and what is wrong, where (line and column). Writes wait
   * for the file to be fixed; reads keep the last good state.
   */
  | 'file-edited'
  /**
   * A batch changing this node, or one above or below it, could not be
   * completed on disk (docs/storage.md, "Batches"): `reason` names the fault.
   * The store is finishing it; until then the node is neither read nor written.
   */
  | 'batch-unfinished'
  /**
   * The answer to the batch itself when its files could not all be placed
   * after its journal was (docs/storage.md, "Batches"): it is kept unfinished
   * and completed by the store. `reason` names the fault, `cause` is it.
   */
  | 'batch-interrupted'

export class StoreError extends Error {
  readonly kind: StoreErrorKind
  readonly path: NodePath
  readonly reason: string | undefined

  constructor(kind: StoreErrorKind, path: NodePath, reason?: string) {
    super(reason === undefined ? `${kind} at /${path.join('/')}` : `${kind} at /${path.join('/')}: ${reason}`)
    this.name = 'StoreError'
    this.kind = kind
    this.path = path
    this.reason = reason
  }
}

export function isStoreError(error: unknown, kind?: StoreErrorKind): error is StoreError {
  return error instanceof StoreError && (kind === undefined || error.kind === kind)
}
