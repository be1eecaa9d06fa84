import { lstat, readdir, rename, rm } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fsyncDirectory } from '../fs/atomic.ts'
import { readDocumentFile } from './document-file.ts'
import { isMissing, toStoreError } from '../fs/fs-errors.ts'
import { childSegments, DOC_FILE } from './names.ts'
import { pruneEmptyDirectories } from './prune.ts'
import type { TempPaths } from './temp-file.ts'
import { parseStoredDoc } from '../serialize.ts'
import type { Doc, NodePath } from '../store.ts'

export interface Removal {
  /** The store folder. */
  root: string
  /** The node's directory. */
  directory: string
  /** A fresh name in the store folder to move the subtree to. */
  trash: string
  path: NodePath
  sync: boolean
  temps: TempPaths
}

/**
 * Removes a node's directory and everything below it, then the ancestors it
 * leaves empty. One rename makes the whole subtree disappear at once; a crash
 * while it is being deleted leaves only a `@trash-*` folder to sweep.
 */
export async function removeSubtree({ root, directory, trash, path, sync, temps }: Removal): Promise<{ existed: boolean; doc?: Doc }> {
  try {
    await rename(directory, trash)
  } catch (error) {
    if (isMissing(error)) return { existed: false }
    throw toStoreError(error, path)
  }
  // A removal beside this one may prune the parent, left empty, before it is flushed: gone, it holds nothing to flush.
  const flushUnlessGone = (folder: string) => fsyncDirectory(folder).catch((error: unknown) => {
    if (!isMissing(error)) throw error
  })
  if (sync) await Promise.all([flushUnlessGone(dirname(directory)), fsyncDirectory(root)])
  const removed = await inspectRemoved(trash, path)
  await rm(trash, { recursive: true, force: true })
  await pruneEmptyDirectories(root, dirname(directory), temps)
  return removed
}

/**
 * What a removal took away, read after the directory was moved aside, so it is
 * exactly what disappeared. `existed` when it held a document or a child; a
 * document file too broken to read (not JSON, a directory, a pipe, a link) is
 * removed all the same, and so is a node folder that was a link (the link
 * alone: nothing is read through it).
 */
export async function inspectRemoved(directory: string, path: NodePath): Promise<{ existed: boolean; doc?: Doc }> {
  const stats = await lstat(directory).catch(() => undefined)
  if (stats === undefined) return { existed: false }
  if (!stats.isDirectory()) return { existed: true }
  const file = await readDocumentFile(join(directory, DOC_FILE)).catch(() => 'unreadable')
  if (typeof file === 'string') return { existed: true }
  if (file !== undefined) {
    try {
      return { existed: true, doc: parseStoredDoc(file.bytes.toString('utf8'), path) }
    } catch {
      return { existed: true }
    }
  }
  const entries = await readdir(directory, { withFileTypes: true }).catch(() => [])
  return { existed: (await childSegments(directory, entries)).length > 0 }
}
