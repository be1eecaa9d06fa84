import { readdir, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { isNodeName } from './names.ts'
import { removeIfEmpty } from './prune.ts'
import type { TempPaths } from './temp-file.ts'

/**
 * Cleans up after a crashed run: deletes its temp files (`@tmp-*`) and the
 * subtrees it was removing (`@trash-*`), and removes node directories left
 * empty. Runs while the new run already serves, so it spares the new run's
 * own temp files (named with `ownRunId`); a write racing an empty-directory
 * removal makes its directory again.
 */
export async function sweepStore(root: string, ownRunId: string, temps: TempPaths): Promise<void> {
  const isLeftover = (name: string) =>
    (name.startsWith('@tmp-') || name.startsWith('@trash-')) && !name.includes(`-${ownRunId}-`)

  async function sweepDirectory(directory: string): Promise<void> {
    const entries = await readdir(directory, { withFileTypes: true }).catch(() => [])
    // One entry at a time: this runs in the background, and must not starve the server of file handles.
    for (const entry of entries) {
      const path = join(directory, entry.name)
      if (isLeftover(entry.name)) await rm(path, { recursive: true, force: true }).catch(() => {})
      // Only node directories: a folder a person made for their own use is left alone.
      else if (isNodeName(entry.name) && entry.isDirectory()) await sweepDirectory(path)
    }
    if (directory !== root) await removeIfEmpty(directory, temps)
  }

  await sweepDirectory(root)
}
