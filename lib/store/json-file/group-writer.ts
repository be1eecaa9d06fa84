import { linkSync } from 'node:fs'
import { rename, unlink } from 'node:fs/promises'
import { dirname } from 'node:path'
import { writeTempFile } from '../fs/atomic.ts'
import { versionOf, type FileVersion } from '../fs/file-version.ts'
import { DirectoryFlusher } from '../fs/flush.ts'

export interface GroupWriterOptions {
  /** The file as the store names it (a link to it, perhaps: see `target`). */
  file: string
  /** The path a file write replaces, found as it starts: `file`, or where `file` links to, so that the link stays and its target gets the write. */
  target(): string
  /** Flush the new file and its folder to disk before a write is acknowledged (`--sync`), as the folder store does. */
  sync: boolean
  /** A fresh temp file name in the given folder (the target's: a rename is atomic only within one file system). */
  tempPath(folder: string): string
  /** The whole file as it is to be now, as UTF-8 parts: called as a file write starts, so it holds every change made before. */
  serialize(): readonly Buffer[]
  /** Throws to keep the file as it is (it was edited by hand since the store last wrote or read it); else the file is about to take `version`. */
  beforeReplace(version: FileVersion): void
  /** The version the file has once a write is in place. */
  written(version: FileVersion): void
  /** A file write failed: everything waiting was refused with `error`, and commits are refused until `recover`. */
  failed(error: unknown): void
}

interface Waiters {
  promise: Promise<void>
  resolve(): void
  reject(error: unknown): void
}

/**
 * Writes the db.json as a whole, atomically (temp file in the same folder,
 * rename; with `sync`, the file and its folder flushed to disk as well, as
 * the folder store does with --sync), with group commit: a write
 * that commits while a file write is under way waits for the next one, which
 * all those writes share. So however many writes come at once, the file is
 * written at most twice for them, where json-server rewrites it once per write.
 */
export class GroupWriter {
  readonly #options: GroupWriterOptions
  #running: Promise<unknown> | undefined
  #next: Waiters | undefined
  #failure: { error: unknown } | undefined
  readonly #folderFlushes = new DirectoryFlusher()
  /** The removal of the file the last file write replaced, kept aside under a temp name until then: at most one at a time (see #replaceFile). */
  #dropping: Promise<void> | undefined
  /** File writes made so far (for tests and the bench). */
  fileWrites = 0

  constructor(options: GroupWriterOptions) {
    this.#options = options
  }

  /** Resolves once a file write that started after this call is in place (so it holds every change made before). */
  commit(): Promise<void> {
    if (this.#failure) return Promise.reject(this.#failure.error)
    if (!this.#running) return this.#start()
    if (!this.#next) {
      let resolve!: () => void
      let reject!: (error: unknown) => void
      const promise = new Promise<void>((yes, no) => ((resolve = yes), (reject = no)))
      this.#next = { promise, resolve, reject }
    }
    return this.#next.promise
  }

  /** Settles when no file write is running or waiting, and the file each replaced is gone. */
  async idle(): Promise<void> {
    while (this.#running) await this.#running.catch(() => {})
    await this.#dropping
  }

  /** The store is what the file says again: commits are taken again. */
  recover(): void {
    this.#failure = undefined
  }

  /**
   * A file write is done, and the next may start, once the new file is in
   * place; its writes are acknowledged once the folder holding the new name
   * is flushed too, which the next file write need not wait for (consecutive
   * ones share it, see DirectoryFlusher).
   */
  #start(): Promise<void> {
    const placed = this.#replaceFile(this.#options.serialize())
    this.#running = placed
    placed.then(() => this.#finished(undefined), (error: unknown) => this.#finished({ error }))
    return this.#options.sync ? placed.then((target) => this.#folderFlushes.flush(dirname(target))) : placed.then(() => {})
  }

  #finished(failure: { error: unknown } | undefined): void {
    this.#running = undefined
    const next = this.#next
    this.#next = undefined
    if (failure) {
      this.#failure = failure
      next?.reject(failure.error)
      this.#options.failed(failure.error)
    } else if (next) {
      this.#start().then(next.resolve, next.reject)
    }
  }

  /**
   * Writes the file anew and answers the path it replaced. The rename that
   * replaces a big file frees its pages as it goes (docs/json-server.md,
   * "Writes"), and every write waiting for the next file write would
   * wait for that: so where the new file has KEEP_ASIDE_BYTES or more (the
   * one it replaces is then about as big), the file is first linked
   * under a temp name, and that name removed once the new file is in place,
   * while the next file write goes on. A file kept aside by a run that
   * stopped meanwhile is a dead temp file, removed as the store opens.
   */
  async #replaceFile(parts: readonly Buffer[]): Promise<string> {
    const file = this.#options.target()
    const temp = this.#options.tempPath(dirname(file))
    const stats = await writeTempFile(temp, parts, this.#options.sync)
    // One removal at a time: a disk slower than the writes holds them back rather than piling up files kept aside.
    await this.#dropping
    let aside: string | undefined
    try {
      this.#options.beforeReplace(versionOf(stats))
      if (stats.size >= KEEP_ASIDE_BYTES) aside = keepAside(file, this.#options.tempPath(dirname(file)))
      await rename(temp, file)
    } catch (error) {
      await unlink(temp).catch(() => {})
      if (aside) await unlink(aside).catch(() => {})
      throw error
    }
    if (aside) this.#dropping = unlink(aside).catch(() => {}).finally(() => (this.#dropping = undefined))
    this.fileWrites++
    // The rename keeps the temp file's inode, size and mtime: the version this store wrote.
    this.#options.written(versionOf(stats))
    return file
  }
}

/** The size of a new file from which the one it replaces is kept aside and removed after the rename (#replaceFile): below it, the link and the removal cost more than they spare. */
export const KEEP_ASIDE_BYTES = 256 * 1024

/** Links `file` at `aside`; undefined where no link can be made (no file there, or a file system without hard links): the rename then frees the file itself. */
function keepAside(file: string, aside: string): string | undefined {
  try {
    linkSync(file, aside)
    return aside
  } catch {
    return undefined
  }
}
