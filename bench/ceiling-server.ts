/**
 * The ceiling: a bare `node:http` server that reads each request's body and
 * answers it with a fixed body held in memory. No Node server on this machine
 * answers faster, so restdir's figures are reported as a fraction of it.
 * Run as a child process: the parent sends `{ body, contentType }` to set the
 * answer, and gets `{ port }` once listening and `{ ok: true }` after each change.
 *
 * With `write`, it is the bare HTTP write server: each request's body is
 * first written the way the file store writes a document, with the bare write
 * loop's calls (bench/write-ceiling.ts), made where restdir makes them: on
 * the calling thread for a new document, through the thread pool for a
 * replacement (docs/speed.md). What it answers at is what HTTP and that write
 * cost this machine together, with the load generator on the same cores;
 * the write loop alone has every core to itself.
 */
import http from 'node:http'
import { closeSync, mkdirSync, openSync, renameSync, writeSync } from 'node:fs'
import { mkdir, mkdtemp, open, rename } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'

let body = Buffer.from('{}')
let contentType = 'application/json; charset=utf-8'
/** Microseconds of busy work before each answer: 0, except to calibrate (see bench/run.ts). */
let busyUs = 0
/** Where and how each request's body is written first, if it is. */
let writing: { root: string; mode: 'create' | 'replace' } | undefined
let written = 0
/** Documents a replacement writes over, as the write loop's. */
const REPLACE_TARGETS = 1000

const server = http.createServer((req, res) => {
  const answer = () => {
    if (busyUs > 0) {
      const until = performance.now() + busyUs / 1000
      while (performance.now() < until);
    }
    res.writeHead(200, { 'Content-Type': contentType, 'Content-Length': body.length })
    res.end(body)
  }
  const into = writing
  if (into === undefined) {
    req.on('data', () => {})
    req.on('end', answer)
    return
  }
  const chunks: Buffer[] = []
  req.on('data', (chunk: Buffer) => chunks.push(chunk))
  req.on('end', () => write(into, Buffer.concat(chunks)).then(answer))
})

/** The write loop's atomic write of `text`: a new folder and its document, or one of REPLACE_TARGETS documents replaced. */
async function write({ root, mode }: { root: string; mode: 'create' | 'replace' }, text: Buffer): Promise<void> {
  const number = written++
  const directory = join(root, mode === 'create' ? `c${number}` : `n${number % REPLACE_TARGETS}`)
  const temp = join(directory, `@tmp-${number}`)
  if (mode === 'create') {
    mkdirSync(directory)
    const fd = openSync(temp, 'wx')
    try {
      writeSync(fd, text)
    } finally {
      closeSync(fd)
    }
    renameSync(temp, join(directory, '@.json'))
    return
  }
  const handle = await open(temp, 'wx')
  try {
    await handle.writeFile(text)
  } finally {
    await handle.close()
  }
  await rename(temp, join(directory, '@.json'))
}

process.on('message', async (message: { body: string; encoding?: BufferEncoding; contentType?: string; busyUs?: number; write?: { dir: string; mode: 'create' | 'replace' } }) => {
  body = Buffer.from(message.body, message.encoding ?? 'utf8')
  contentType = message.contentType ?? 'application/json; charset=utf-8'
  busyUs = message.busyUs ?? 0
  writing = undefined
  if (message.write) {
    await mkdir(message.write.dir, { recursive: true })
    const root = await mkdtemp(join(message.write.dir, `http-${message.write.mode}-`))
    if (message.write.mode === 'replace') {
      for (let index = 0; index < REPLACE_TARGETS; index++) {
        await mkdir(join(root, `n${index}`))
        await (await open(join(root, `n${index}`, '@.json'), 'wx')).close()
      }
    }
    writing = { root, mode: message.write.mode }
  }
  process.send!({ ok: true })
})
process.on('disconnect', () => process.exit(0))

server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }))
