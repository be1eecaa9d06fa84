import { readdirSync, statSync, type BigIntStats } from 'node:fs'
import type { FileHandle } from 'node:fs/promises'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { open, realpath, stat } from 'node:fs/promises'
import { join, sep } from 'node:path'
import { HttpError } from '../http-error.ts'
import { sendProblem } from '../http/problem.ts'
import { contentTypeFor } from './mime.ts'
import { ifRangeHolds, isNotModified } from '../http/conditional.ts'
import { StaticCache, type StaticFileVersion, type StaticCacheOptions, type StaticCacheStats } from './static-cache.ts'
import { FolderWatch } from '../store/fs/folder-watch.ts'

/** Bytes a file is read in (see sendBytes): larger reads than a stream's 64 KiB, as each costs a call to the thread pool. */
const STREAM_CHUNK = 256 * 1024

/** Inclusive byte positions, as in `Content-Range`. */
interface ByteRange {
  start: number
  end: number
}

/**
 * The www folder's files: answers GET and HEAD for them, from what a former
 * answer kept when it may (lib/static/static-cache.ts says why that is safe),
 * else through the path checks below. `false` for options keeps nothing.
 */
export class StaticFiles {
  readonly root: string
  readonly #cache: StaticCache | undefined
  readonly #topNames: TopNames
  /** One watch on the folder, for both what the cache keeps and the names at the top. */
  readonly #watch: FolderWatch

  constructor(root: string, options: StaticCacheOptions | false = {}) {
    this.root = root
    this.#watch = new FolderWatch(root)
    this.#cache = options === false ? undefined : new StaticCache(this.#watch, options)
    this.#topNames = new TopNames(this.#watch)
  }

  /** A quick, synchronous "maybe" (see mayBeFile); a file answered before is a "yes" with no system call. */
  mayServe(segments: readonly string[]): boolean {
    // Most data URLs stop here. What is kept was found under a top name, and is forgotten with the names (one watch).
    if (segments.length > 0 && !this.#topNames.mayHold(segments[0])) return false
    if (this.#cache?.has(segments.join('/')) && segments.every(isSafeSegment)) return true
    return mayBeFile(segments, this.root, this.#topNames)
  }

  /**
   * Answers a GET/HEAD for a file under the root. Returns false, having
   * written nothing, when the segments name no servable file (so the caller
   * can fall through to the data API or answer 404).
   */
  async serve(req: IncomingMessage, res: ServerResponse, segments: readonly string[]): Promise<boolean> {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false
    // Before anything kept is looked at: `a%2Fb` must not find what `a/b` kept.
    if (!segments.every(isSafeSegment)) return false
    const cache = this.#cache
    const key = segments.join('/')
    const kept = cache?.fresh(key)
    if (kept !== undefined) {
      if (kept.body !== undefined || !needsBytes(req, kept)) {
        await answer(req, res, kept)
        return true
      }
      const handle = await this.#openSame(kept)
      if (handle !== undefined) {
        await answer(req, res, kept, handle)
        return true
      }
      cache!.forget(key)
    }
    return this.#lookUp(req, res, segments, key)
  }

  /** What is kept, and how often the disk was asked; undefined when nothing is kept. */
  stats(): StaticCacheStats | undefined {
    return this.#cache?.stats()
  }

  close(): void {
    this.#watch.close()
    this.#cache?.close()
  }

  /** The path checks, then the file: kept for next time when the cache may keep it. */
  async #lookUp(req: IncomingMessage, res: ServerResponse, segments: readonly string[], key: string): Promise<boolean> {
    const cache = this.#cache
    const lookup = cache?.beginLookup()
    const found = await findFile(segments, this.root)
    if (found === undefined) return false
    const kept = cache?.kept(key)
    if (kept?.body !== undefined && kept.path === found.path && kept.version === versionOf(found.stats)) {
      // Checked again after its time of trust ran out, and found the very same: its bytes still hold.
      cache!.keep(key, lookup, found.realRoot, kept)
      await answer(req, res, kept)
      return true
    }
    const opened = await openFile(found.path)
    if (opened === undefined) return false
    if (cache) cache.opens++
    const { handle, file } = opened
    if (cache === undefined || !cache.holdsBytesOf(file.size)) {
      cache?.keep(key, lookup, found.realRoot, file)
      await answer(req, res, file, handle)
      return true
    }
    let body: Buffer
    try {
      const { buffer, bytesRead } = await handle.read(Buffer.allocUnsafe(file.size), 0, file.size, 0)
      body = buffer.subarray(0, bytesRead)
    } finally {
      await handle.close()
    }
    // A file cut short since its stat is sent as it now is, and not kept: it is being written.
    if (body.length === file.size) cache.keep(key, lookup, found.realRoot, { ...file, body })
    await answer(req, res, { ...file, size: body.length, body })
    return true
  }

  /** Opens a kept large file's real path, if it still holds the very version kept (see 4. in static-cache.ts). */
  async #openSame(file: StaticFileVersion): Promise<FileHandle | undefined> {
    this.#cache!.opens++
    const handle = await unlessMissing(open(file.path, 'r'))
    if (handle === undefined) return undefined
    try {
      const stats = await handle.stat({ bigint: true })
      if (stats.isFile() && versionOf(stats) === file.version) return handle
    } catch (error) {
      await handle.close()
      throw error
    }
    await handle.close()
    return undefined
  }
}

/** One StaticFiles per folder, for callers that name the folder only. */
const sharedByRoot = new Map<string, StaticFiles>()

/**
 * Answers a GET/HEAD for a file under `www` (a folder, whose files are then
 * kept with the default bounds, or a StaticFiles). Returns false, having
 * written nothing, when the segments name no servable file.
 */
export function serveStatic(req: IncomingMessage, res: ServerResponse, segments: readonly string[], www: string | StaticFiles): Promise<boolean> {
  if (typeof www === 'string') {
    let shared = sharedByRoot.get(www)
    if (shared === undefined) sharedByRoot.set(www, (shared = new StaticFiles(www)))
    www = shared
  }
  return www.serve(req, res, segments)
}

/** Whether answering needs the file's bytes: a GET that is not a 304, of a file that has some. */
function needsBytes(req: IncomingMessage, file: StaticFileVersion): boolean {
  return req.method === 'GET' && file.size > 0 && !isNotModified(req.headers, file)
}

/**
 * Answers from a file's version: a 304, a 416, or its headers and bytes — from
 * `file.body` when it is kept in memory, else through `handle`, which this closes.
 */
async function answer(req: IncomingMessage, res: ServerResponse, file: StaticFileVersion, handle?: FileHandle): Promise<void> {
  try {
    if (isNotModified(req.headers, file)) {
      setValidators(res, file)
      res.writeHead(304).end()
      return
    }
    // RFC 9110 §14.2: GET is the only method with range handling; HEAD ignores Range.
    const rangeHeader = req.method === 'GET' && ifRangeHolds(req.headers['if-range'], file) ? req.headers.range : undefined
    const range = rangeHeader === undefined ? undefined : parseRange(rangeHeader, file.size)
    if (range === 'unsatisfiable') {
      const detail = `The requested byte range lies outside this ${file.size}-byte file; ask for a range that starts before byte ${file.size}, or drop the Range header.`
      sendProblem(res, new HttpError(416, detail, { 'Content-Range': `bytes */${file.size}` }))
      return
    }

    res.setHeader('Content-Type', contentTypeFor(file.path))
    res.setHeader('Accept-Ranges', 'bytes')
    res.setHeader('X-Content-Type-Options', 'nosniff')
    setValidators(res, file)
    const body = range ?? { start: 0, end: file.size - 1 }
    if (range !== undefined) {
      res.statusCode = 206
      res.setHeader('Content-Range', `bytes ${range.start}-${range.end}/${file.size}`)
    }
    res.setHeader('Content-Length', body.end - body.start + 1)
    if (req.method === 'HEAD' || file.size === 0) {
      res.end()
      return
    }
    if (file.body !== undefined) {
      res.end(range === undefined ? file.body : file.body.subarray(body.start, body.end + 1))
      return
    }
    if (handle === undefined) throw new Error(`No open file to send ${file.path} from.`)
    await sendBytes(handle, res, body)
  } finally {
    await handle?.close()
  }
}

/**
 * Sends a span of an open file in reads of STREAM_CHUNK bytes, each written
 * as it is read and the last with `end`, waiting while the socket is full: a
 * file up to a chunk goes out in one read and one write, and an answer holds
 * one chunk at most. A client that hangs up (a normal event, not a fault)
 * ends the loop; a read error is a real fault, rethrown for the server to
 * log, and the client, already sent a status, sees a cut-short answer rather
 * than bad bytes.
 */
async function sendBytes(handle: FileHandle, res: ServerResponse, span: ByteRange): Promise<void> {
  let position = span.start
  while (!res.destroyed) {
    const length = Math.min(STREAM_CHUNK, span.end + 1 - position)
    let chunk: Buffer
    try {
      const { buffer, bytesRead } = await handle.read(Buffer.allocUnsafe(length), 0, length, position)
      chunk = buffer.subarray(0, bytesRead)
    } catch (error) {
      res.destroy()
      throw error
    }
    if (res.destroyed) return
    position += chunk.length
    if (chunk.length < length) {
      // Cut short since its stat: sent as it now is while the headers can still say so, else cut off.
      if (res.headersSent) res.destroy()
      else res.setHeader('Content-Length', position - span.start).end(chunk)
      return
    }
    if (position > span.end) {
      res.end(chunk)
      return
    }
    if (!res.write(chunk)) await drainedOrClosed(res)
  }
}

function drainedOrClosed(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done).off('close', done)
      resolve()
    }
    res.on('drain', done).on('close', done)
  })
}

/**
 * The real path of the regular file that `segments` name under `root`, or
 * undefined. send/serve-static's order: refuse unsafe segments before touching
 * the disk, resolve every link, then check the real path is inside the real root.
 */
async function findFile(segments: readonly string[], root: string): Promise<FoundFile | undefined> {
  if (!mayBeFile(segments, root)) return undefined
  const realRoot = await unlessMissing(realpath(root))
  if (realRoot === undefined) return undefined

  let realFile = await unlessMissing(realpath(join(realRoot, ...segments)))
  if (realFile === undefined) return undefined
  let stats = await unlessMissing(stat(realFile, { bigint: true }))
  if (stats?.isDirectory()) {
    realFile = await unlessMissing(realpath(join(realFile, 'index.html')))
    if (realFile === undefined) return undefined
    stats = await unlessMissing(stat(realFile, { bigint: true }))
  }
  // Checked on the final real path, before anything is opened: a link may lead anywhere.
  if (!isVisibleInside(realRoot, realFile)) return undefined
  // Only regular files: opening a FIFO would hang, and devices are never content.
  return stats?.isFile() ? { realRoot, path: realFile, stats } : undefined
}

interface FoundFile {
  realRoot: string
  path: string
  stats: BigIntStats
}

/**
 * A quick first look that rules out what cannot be served, synchronously:
 * every data URL outside a prefix passes through here, and most name nothing
 * in the www folder. A first segment that names nothing at the top of the
 * folder (`topNames`) rules a URL out with no system call at all; else one
 * stat that finds nothing costs a few µs, where the async realpath chain of
 * findFile costs some 50 µs of CPU (measured in bench/).
 * True means only "maybe": whatever exists, or cannot be told, gets the full checks.
 */
export function mayBeFile(segments: readonly string[], root: string, topNames?: TopNames): boolean {
  if (topNames && segments.length > 0 && !topNames.mayHold(segments[0])) return false
  if (!segments.every(isSafeSegment)) return false
  try {
    return statSync(join(root, ...segments), { throwIfNoEntry: false }) !== undefined
  } catch (error) {
    return !missingCodes.has((error as NodeJS.ErrnoException).code ?? '')
  }
}

/**
 * The names at the top of the www folder, read once and kept while the
 * folder's watch (lib/store/fs/folder-watch.ts) sees no change: any change
 * forgets them, and the next request reads them again, so a file a person
 * adds is served from the next request on. Names are compared folded
 * (Unicode NFC, lower case), so a disk that ignores case or normalisation can
 * only make more URLs "maybe". When the folder cannot be read or watched, it
 * answers "maybe" for everything and mayBeFile stats as before.
 */
export class TopNames {
  readonly #watch: FolderWatch
  #names: Set<string> | undefined
  /**
   * The answers given, by the name as asked: a data API sees the same few
   * collection names on every request, and folding one (its NFC form) costs
   * more than the rest of the look. Forgotten with the names; bounded.
   */
  readonly #answers = new Map<string, boolean>()

  constructor(watch: FolderWatch) {
    this.#watch = watch
    watch.onChange(() => {
      this.#names = undefined
      this.#answers.clear()
    })
  }

  /** False only when no entry at the top of the folder can be `name`. */
  mayHold(name: string): boolean {
    const known = this.#answers.get(name)
    if (known !== undefined) return known
    const names = this.#current()
    if (names === undefined) return true
    const answer = names.has(fold(name))
    if (this.#answers.size >= MAX_KEPT_ANSWERS) this.#answers.clear()
    this.#answers.set(name, answer)
    return answer
  }

  #current(): Set<string> | undefined {
    if (this.#names !== undefined || !this.#watch.arm()) return this.#names
    try {
      // The watch is armed first, then the folder read: a change made in between is then never missed.
      this.#names = new Set(readdirSync(this.#watch.realRoot!).map(fold))
    } catch {
      this.#names = undefined
    }
    return this.#names
  }
}

/** Names whose answer TopNames keeps at most (one per collection a client reads, in practice). */
const MAX_KEPT_ANSWERS = 1000

function fold(name: string): string {
  return name.normalize('NFC').toLowerCase()
}

/**
 * A decoded segment that can only name an entry of its own folder: not `.`
 * or `..`, not hidden (dotfiles are never served), and free of `/`, `\` and
 * NUL, which splitPath may have decoded from `%2F`, `%5C` and `%00`.
 */
function isSafeSegment(segment: string): boolean {
  return segment !== '' && !segment.startsWith('.') && !/[/\\\0]/.test(segment)
}

/**
 * True when the real path `file` lies inside the real path `root`, compared
 * with a trailing separator (CVE-2014-6394: `/srv/www-secret/key` starts with
 * `/srv/www` but is not inside it), and no part of it below root is hidden —
 * a link inside the folder may point at a dotfile.
 */
function isVisibleInside(root: string, file: string): boolean {
  const prefix = root.endsWith(sep) ? root : root + sep
  if (!file.startsWith(prefix)) return false
  return file.slice(prefix.length).split(sep).every((part) => part !== '' && !part.startsWith('.'))
}

/** Opens the file and reads the metadata from the open descriptor, so headers and bytes describe the same file. */
async function openFile(path: string): Promise<{ handle: FileHandle; file: StaticFileVersion } | undefined> {
  const handle = await unlessMissing(open(path, 'r'))
  if (handle === undefined) return undefined
  try {
    const stats = await handle.stat({ bigint: true })
    if (!stats.isFile()) {
      await handle.close()
      return undefined
    }
    const lastModified = new Date(Number(stats.mtimeMs)).toUTCString()
    return { handle, file: { path, size: Number(stats.size), version: versionOf(stats), etag: etagFor(stats), lastModified } }
  } catch (error) {
    await handle.close()
    throw error
  }
}

/**
 * A strong validator (RFC 9110 §8.8.3) built from the file's identity and
 * version — inode, size and nanosecond mtime — so it changes whenever the
 * file is rewritten or replaced, without reading it to hash it.
 */
function etagFor(stats: BigIntStats): string {
  return `"${stats.ino.toString(36)}-${stats.size.toString(36)}-${stats.mtimeNs.toString(36)}"`
}

/** The same file, unchanged: what a kept answer is compared with (see lib/static/static-cache.ts). */
function versionOf(stats: BigIntStats): string {
  return `${stats.dev}-${stats.ino}-${stats.size}-${stats.mtimeNs}`
}

function setValidators(res: ServerResponse, file: StaticFileVersion): void {
  res.setHeader('ETag', file.etag)
  res.setHeader('Last-Modified', file.lastModified)
  // Cached copies must be revalidated, which the validators make a cheap 304.
  res.setHeader('Cache-Control', 'no-cache')
}

/**
 * Reads a Range header (RFC 9110 §14.1.2) against a file of `size` bytes.
 * Only one range of the `bytes` unit is served: `a-b` (end clamped to the
 * file), `a-`, or the suffix `-n`. Returns 'unsatisfiable' when the range
 * starts past the end or asks for zero trailing bytes (§14.1.1, a 416), and
 * undefined when the header is to be ignored and the whole file sent (§14.2):
 * several ranges (no multipart/byteranges here), another unit, a malformed or
 * an invalid spec such as `5-3`.
 */
function parseRange(fieldValue: string, size: number): ByteRange | 'unsatisfiable' | undefined {
  const match = /^bytes=(\d*)-(\d*)$/i.exec(fieldValue.trim())
  if (match === null) return undefined
  const [, first = '', last = ''] = match
  if (first === '') {
    if (last === '') return undefined
    const suffixLength = Number(last)
    if (suffixLength === 0) return 'unsatisfiable'
    // A suffix of an empty file is the whole (empty) file, which no Content-Range can name.
    if (size === 0) return undefined
    return { start: Math.max(0, size - suffixLength), end: size - 1 }
  }
  const start = Number(first)
  if (last !== '' && Number(last) < start) return undefined
  if (start >= size) return 'unsatisfiable'
  return { start, end: last === '' ? size - 1 : Math.min(Number(last), size - 1) }
}

const missingCodes = new Set(['ENOENT', 'ENOTDIR', 'ENAMETOOLONG', 'ELOOP', 'EACCES', 'EPERM', 'EISDIR'])

/**
 * Awaits a file-system call, turning "there is nothing servable here" errors
 * into undefined (the request falls through); any other fault is rethrown.
 */
async function unlessMissing<T>(operation: Promise<T>): Promise<T | undefined> {
  try {
    return await operation
  } catch (error) {
    if (missingCodes.has((error as NodeJS.ErrnoException).code ?? '')) return undefined
    throw error
  }
}
