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
