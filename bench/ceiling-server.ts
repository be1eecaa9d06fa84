/**
 * The ceiling: a bare `node:http` server that reads each request's body and
 * answers it with a fixed body held in memory. No Node server on this machine
 * answers faster, so restdir's figures are reported as a fraction of it.
 * Run as a child process: the parent sends `{ body, contentType }` to set the
 * answer, and gets `{ port }` once listening and `{ ok: true }` after each change.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'

let body = Buffer.from('{}')
let contentType = 'application/json; charset=utf-8'
/** Microseconds of busy work before each answer: 0, except to calibrate (see bench/run.ts). */
let busyUs = 0

const server = http.createServer((req, res) => {
  req.on('data', () => {})
  req.on('end', () => {
    if (busyUs > 0) {
      const until = performance.now() + busyUs / 1000
      while (performance.now() < until);
    }
    res.writeHead(200, { 'Content-Type': contentType, 'Content-Length': body.length })
    res.end(body)
  })
})

process.on('message', (message: { body: string; encoding?: BufferEncoding; contentType?: string; busyUs?: number }) => {
  body = Buffer.from(message.body, message.encoding ?? 'utf8')
  contentType = message.contentType ?? 'application/json; charset=utf-8'
  busyUs = message.busyUs ?? 0
  process.send!({ ok: true })
})
process.on('disconnect', () => process.exit(0))

server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }))
