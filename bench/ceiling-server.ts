/**
 * The ceiling: a bare `node:http` server that reads each request's body and
 * answers it with a fixed body held in memory. No Node server on this machine
 * answers faster, so restdir's figures are reported as a fraction of it.
 * Run as a child process: the parent sends `{ body, contentType }` to set the
 * answer, and gets `{ port }` once listening and `{ ok: true }` after each change.
 *
 * With `write`, it is the bare HTTP write server: each request's body is
 * first written the way the file store writes a document, with the bare
 * write loop's calls (bench/write-ceiling.ts) and, on Linux, the readlink
 * with which the store asks where its temporary file landed, all on the
 * event loop's thread or all through the thread pool. With `read`, it is the bare HTTP
 * read server: each `GET /{collection}/{id}` answers that document's file in
 * a store folder, read on the event loop's thread with the file store's own
 * calls (readDocumentFileSync: an open that follows no link, on Linux a
 * readlink that asks where it landed, an fstat, one read, a close), and
 * answered as a `GET` owes it: parsed and checked to be served exactly as
 * written (parseStoredDoc), in its compact form, with the ETag of its bytes
 * (docs/http-api.md). What either answers at is what HTTP and that work
 * cost this machine together, with the load generator on the same cores
 * (the write loop alone has every core to itself).
 */
import http from 'node:http'
import { closeSync, mkdirSync, openSync, realpathSync, renameSync, writeSync } from 'node:fs'
import { mkdir, mkdtemp, open, rename } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { readDocumentFileSync } from '../lib/store/file/document-file.ts'
import { etagOf, parseStoredDoc } from '../lib/store/serialize.ts'
import { OPEN_PLACES, placeOf } from '../lib/store/fs/open-place.ts'

/** How each request's body is written first: its folder of new folders or of documents to replace, and whether the calls go through the pool. */
interface Writing {
  root: string
  mode: 'create' | 'replace'
  pool: boolean
}

let body: Buffer = Buffer.from('{}')
let contentType = 'application/json; charset=utf-8'
/** Microseconds of busy work before each answer: 0, except to calibrate (see bench/run.ts). */
let busyUs = 0
let writing: Writing | undefined
/** The store folder whose document files GETs answer, if they do, and where it is once every link is resolved. */
interface Reading {
  root: string
  realRoot: string
}
let reading: Reading | undefined
let written = 0
/** Documents a replacement writes over, as the write loop's. */
const REPLACE_TARGETS = 1000

const server = http.createServer((req, res) => {
  const answer = (bytes: Buffer | string = body, etag?: string) => {
    if (busyUs > 0) {
      const until = performance.now() + busyUs / 1000
      while (performance.now() < until);
    }
    res.writeHead(200, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(bytes), ...(etag && { ETag: etag }) })
    res.end(bytes)
  }
  const into = writing
  if (into === undefined) {
    req.on('data', () => {})
    req.on('end', () => {
      if (reading === undefined) return answer()
      const { json, etag } = readAsStore(reading, req.url!)
      answer(json, etag)
    })
    return
  }
  const chunks: Buffer[] = []
  req.on('data', (chunk: Buffer) => chunks.push(chunk))
  req.on('end', () => {
    const text = Buffer.concat(chunks)
    if (!into.pool) {
      writeNow(into, text)
      answer()
    } else {
      void writeInPool(into, text).then(() => answer())
    }
  })
})

/**
 * A document's file read as the file store reads one it has not cached, and what a `GET` answers
 * with it: its compact text and ETag (a request for no such file is the bench's mistake, and stops it).
 */
function readAsStore({ root, realRoot }: Reading, url: string): { json: string; etag: string } {
  const file = join(root, url, '@.json')
  const read = readDocumentFileSync(file, OPEN_PLACES ? join(realRoot, url, '@.json') : undefined)
  if (typeof read !== 'object') throw new Error(`The bare HTTP read server found no document file at ${file}.`)
  return { json: JSON.stringify(parseStoredDoc(read.bytes.toString('utf8'), [])) + '\n', etag: etagOf(read.bytes) }
}

/** Where the next write goes: a new folder, or one of REPLACE_TARGETS documents. */
function nextWrite({ root, mode }: Writing): { directory: string; temp: string } {
  const number = written++
  const directory = join(root, mode === 'create' ? `c${number}` : `n${number % REPLACE_TARGETS}`)
  return { directory, temp: join(directory, `@tmp-${number}`) }
}

/** The write loop's atomic write of `text` on the event loop's thread. */
function writeNow(into: Writing, text: Buffer): void {
  const { directory, temp } = nextWrite(into)
  if (into.mode === 'create') mkdirSync(directory)
  const fd = openSync(temp, 'wx')
  try {
    askWhere(fd)
    writeSync(fd, text)
  } finally {
    closeSync(fd)
  }
  renameSync(temp, join(directory, '@.json'))
}

/** As the file store asks where a temporary file landed before it writes a byte (on Linux: lib/store/fs/open-place.ts). */
function askWhere(fd: number): void {
  if (OPEN_PLACES) placeOf(fd)
}

/** The same write through the thread pool, as the write loop makes it. */
async function writeInPool(into: Writing, text: Buffer): Promise<void> {
  const { directory, temp } = nextWrite(into)
  if (into.mode === 'create') await mkdir(directory)
  const handle = await open(temp, 'wx')
  try {
    askWhere(handle.fd)
    await handle.writeFile(text)
  } finally {
    await handle.close()
  }
  await rename(temp, join(directory, '@.json'))
}

interface Message {
  body: string
  encoding?: BufferEncoding
  contentType?: string
  busyUs?: number
  write?: { dir: string; mode: 'create' | 'replace'; pool: boolean }
  read?: string
}

process.on('message', async (message: Message) => {
  body = Buffer.from(message.body, message.encoding ?? 'utf8')
  contentType = message.contentType ?? 'application/json; charset=utf-8'
  busyUs = message.busyUs ?? 0
  writing = undefined
  reading = message.read === undefined ? undefined : { root: message.read, realRoot: realpathSync(message.read) }
  if (message.write) {
    const { dir, mode, pool } = message.write
    await mkdir(dir, { recursive: true })
    const root = await mkdtemp(join(dir, `http-${mode}-`))
    if (mode === 'replace') {
      for (let index = 0; index < REPLACE_TARGETS; index++) {
        await mkdir(join(root, `n${index}`))
        await (await open(join(root, `n${index}`, '@.json'), 'wx')).close()
      }
    }
    writing = { root, mode, pool }
  }
  process.send!({ ok: true })
})
process.on('disconnect', () => process.exit(0))

server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }))
