import { StoreError } from '../errors.ts'
import type { NodePath } from '../store.ts'

/** The `code` of a Node.js system error (ENOENT, EEXIST, …), if it has one. */
export function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code
}

/** True when a file or one of its folders is not there: the node holds nothing. */
export function isMissing(error: unknown): boolean {
  const code = errorCode(error)
  return code === 'ENOENT' || code === 'ENOTDIR'
}

const kindOfCode: Record<string, StoreError['kind']> = {
  ENAMETOOLONG: 'path-too-long',
  ENOSPC: 'disk-full',
  EDQUOT: 'disk-full',
  EMFILE: 'out-of-descriptors',
  ENFILE: 'out-of-descriptors',
  EROFS: 'read-only',
  EACCES: 'read-only',
  EPERM: 'read-only',
}

/**
 * Names a file-system error the store knows how to explain (disk full, out of
 * descriptors, read-only, path too long) as a StoreError about `path`; any
 * other error stays as it is, an internal fault.
 */
export function toStoreError(error: unknown, path: NodePath): unknown {
  if (error instanceof StoreError) return error
  const kind = kindOfCode[errorCode(error) ?? '']
  return kind === undefined ? error : new StoreError(kind, path)
}

/** What the log says of a fault of the whole store (FileStore reports each at most once a minute). */
export const storeTrouble: Record<string, string> = {
  'store-gone': 'the store folder was deleted or moved away; every request is answered 503 until it is back',
  'read-only': 'the store folder cannot be written (read-only or no permission); writes are answered 503',
  'disk-full': 'the disk is full; writes are answered 507 until space is freed',
  'out-of-descriptors': 'out of file descriptors; requests that need one are answered 503 until some are free',
}
