import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { buildRequest, sendAll } from './load.ts'
import { requestOnce, type RunningServer } from './processes.ts'
import { COLLECTION, DOCUMENT_PATH, LARGE_FILE, SMALL_FILE, itemDoc, itemId, type Fixture } from './workloads.ts'

export interface Memory {
  /** RSS in bytes after the first tenth of the documents were written, after all, and after all were read once. */
  afterTenth: number
  afterAll: number
  afterReadingAll: number
}

const BATCH = 5000
const CONNECTIONS = 50

/**
 * Fills an empty store through restdir's own HTTP API: a user, a generic
 * document and `count` documents in one collection; then reads each document
 * once. Measures the server's RSS along the way.
 */
export async function fillStore(server: RunningServer, count: number, log: (line: string) => void): Promise<{ fixture: Omit<Fixture, 'smallFile' | 'largeFile'>; memory: Memory }> {
  const user = await sendJson(server.port, 'POST', '/user', { username: 'bench', name: 'Bench Mark' })
  const userId = String(user.user_id)
  await sendJson(server.port, 'PUT', DOCUMENT_PATH, { title: 'Welcome', body: 'A generic document, as any URL can hold.', tags: ['intro'] })

  const itemIds = Array.from({ length: count }, (_, n) => itemId(n))
  const memory: Memory = { afterTenth: NaN, afterAll: NaN, afterReadingAll: NaN }
  const tenth = Math.ceil(count / 10)
  await inBatches(count, tenth, (n) => buildRequest('PUT', `/${COLLECTION}/${itemIds[n]}`, itemDoc(n)), 'writing', log, server)
  memory.afterTenth = server.rss()
  await inBatches(count, count, (n) => buildRequest('PUT', `/${COLLECTION}/${itemIds[n]}`, itemDoc(n)), 'writing', log, server, tenth)
  memory.afterAll = server.rss()
  await inBatches(count, count, (n) => buildRequest('GET', `/${COLLECTION}/${itemIds[n]}`), 'reading', log, server)
  memory.afterReadingAll = server.rss()

  const userBody = await bodyOf(server.port, `/user/${userId}`)
  const documentBody = await bodyOf(server.port, DOCUMENT_PATH)
  const page = itemIds.slice(0, 20).map((id, n) => ({ id, ...itemDoc(n) }))
  const envelopeBody = await bodyOf(server.port, `/${COLLECTION}?_page=1&_per_page=20`)
  return { fixture: { itemIds, userId, userBody, documentBody, pageBody: Buffer.from(JSON.stringify(page)), envelopeBody }, memory }
}

/** The static files the file workloads fetch: 1 KiB of text and 256 KiB of bytes. */
export async function writeStaticFiles(www: string): Promise<{ smallFile: Buffer; largeFile: Buffer }> {
  const smallFile = Buffer.from('restdir static file. '.repeat(64).slice(0, 1024))
  const largeFile = Buffer.alloc(256 * 1024)
  for (let index = 0; index < largeFile.length; index++) largeFile[index] = (index * 7919) & 0xff
  await writeFile(join(www, SMALL_FILE), smallFile)
  await writeFile(join(www, LARGE_FILE), largeFile)
  await writeFile(join(www, 'index.html'), '<!doctype html><title>bench</title>')
  return { smallFile, largeFile }
}

async function inBatches(
  count: number,
  until: number,
  makeRequest: (n: number) => Buffer,
  what: string,
  log: (line: string) => void,
  server: RunningServer,
  from = 0,
): Promise<void> {
  for (let start = from; start < until; start += BATCH) {
    const end = Math.min(until, start + BATCH)
    const requests = Array.from({ length: end - start }, (_, offset) => makeRequest(start + offset))
    const { errors } = await sendAll(server.port, CONNECTIONS, requests)
    if (errors > 0) throw new Error(`${errors} of ${requests.length} requests failed while ${what} documents ${start}-${end}.`)
    log(`${what} ${end}/${count}`)
  }
}

async function sendJson(port: number, method: string, path: string, body: unknown): Promise<Record<string, unknown>> {
  const answer = await requestOnce(port, method, path, body)
  if (answer.status >= 300) throw new Error(`${method} ${path} answered ${answer.status} while filling the store: ${answer.body}`)
  return JSON.parse(answer.body.toString()) as Record<string, unknown>
}

async function bodyOf(port: number, path: string): Promise<Buffer> {
  const answer = await requestOnce(port, 'GET', path)
  if (answer.status !== 200) throw new Error(`GET ${path} answered ${answer.status} after filling the store.`)
  return answer.body
}
