import { HttpError } from '../errors.ts'

/** The `code` of a Node.js system error (ENOENT, EEXIST, …), if it has one. */
export function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code
}

/** True when a file or one of its folders is not there: the node holds nothing. */
export function isMissing(error: unknown): boolean {
  const code = errorCode(error)
  return code === 'ENOENT' || code === 'ENOTDIR'
}

/**
 * Turns a file-system error into what the client should hear. A path too long
 * for the file system is the client's to fix (414); anything else stays an
 * internal fault, which must not leak a file path (SPEC §8).
 */
export function toStoreError(error: unknown): unknown {
  if (errorCode(error) === 'ENAMETOOLONG') {
    return new HttpError(414, 'The path is too long for the store folder on this file system; use shorter or fewer segments.')
  }
  return error
}
