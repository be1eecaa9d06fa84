import { readdirSync, realpathSync, watch, type FSWatcher } from 'node:fs'
import { join } from 'node:path'

/** A www folder with more folders than this is not watched (one watch each), and so not cached. */
export const MAX_WATCHED_FOLDERS = 1000

/**
 * A watch on every folder under the real root, made by walking it (Node 20's
 * recursive watch on Linux watches every file as well, and swallows a watch
 * limit reached while it starts). Any event forgets the whole watch; the next
 * `arm` walks again.
 */
export class FolderWatch {
  readonly #root: string
  readonly #listeners: Array<() => void> = []
  #watchers: FSWatcher[] = []
  #unwatchable = false
  generation = 0
  realRoot: string | undefined

  constructor(root: string) {
    this.#root = root
  }

  /** Calls `listener` after every change the watch sees, and when it closes. */
  onChange(listener: () => void): void {
    this.#listeners.push(listener)
  }

  /** True when every folder is watched (walking them now if need be). */
  arm(): boolean {
    if (this.realRoot !== undefined) return true
    if (this.#unwatchable) return false
    const watchers: FSWatcher[] = []
    const changed = () => {
      if (this.#watchers === watchers) this.#changed()
    }
    this.#watchers = watchers
    try {
      const realRoot = realpathSync(this.#root)
      const folders = [realRoot]
      for (let index = 0; index < folders.length; index++) {
        if (folders.length > MAX_WATCHED_FOLDERS) throw Object.assign(new Error('too many folders to watch'), { code: 'ETOOMANY' })
        // Watch first, then read: an entry added in between is then never missed.
        const watcher = watch(folders[index], { persistent: false }, changed)
        watcher.on('error', changed)
        watchers.push(watcher)
        for (const entry of readdirSync(folders[index], { withFileTypes: true })) {
          if (entry.isDirectory() && !entry.name.startsWith('.')) folders.push(join(folders[index], entry.name))
        }
      }
      this.realRoot = realRoot
      return true
    } catch (error) {
      this.#changed()
      // A folder that went away while it was walked: try again next time. Anything else: no watch to be had.
      if (!vanishedCodes.has((error as NodeJS.ErrnoException).code ?? '')) this.#unwatchable = true
      return false
    }
  }

  close(): void {
    this.#unwatchable = true
    this.#changed()
  }

  #changed(): void {
    this.generation++
    this.realRoot = undefined
    for (const watcher of this.#watchers) watcher.close()
    this.#watchers = []
    for (const listener of this.#listeners) listener()
  }
}

const vanishedCodes = new Set(['ENOENT', 'ENOTDIR'])
