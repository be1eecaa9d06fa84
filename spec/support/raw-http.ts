import { connect } from 'node:net'
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http'

/** One HTTP/1.1 answer as it came off the wire. */
export interface RawAnswer {
  status: number
  /** Header names in lower case; repeated headers joined with ", ". */
  headers: Record<string, string>
  body: Buffer
}

export interface RawExchange {
  answers: RawAnswer[]
  /** What was wrong with the bytes the server sent, if anything. */
  malformed?: string
  /** The connection was reset (rather than closed) by the server. */
  reset: boolean
  /** The server kept the connection open past the wait without closing it. */
  timedOut: boolean
}

/**
 * Sends bytes exactly as given on a fresh connection and reads until the
 * server closes it (requests should carry `Connection: close`), then parses
 * every answer strictly: a status line, well-formed headers, and a body framed
 * by Content-Length or chunked encoding that matches what arrived.
 */
export function rawExchange(port: number, request: Buffer | string, options: { waitMs?: number; head?: boolean } = {}): Promise<RawExchange> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port })
    const chunks: Buffer[] = []
    let reset = false
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      socket.destroy()
    }, options.waitMs ?? 10_000)
    // Not end(): a client that half-closes its side may lose its answer; the request says Connection: close.
    socket.on('connect', () => socket.write(request))
    socket.on('data', (chunk: Buffer) => chunks.push(chunk))
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNRESET' || error.code === 'EPIPE') reset = true
    })
    socket.on('close', () => {
      clearTimeout(timer)
      const parsed = parseAnswers(Buffer.concat(chunks), options.head ?? false)
      resolve({ ...parsed, reset, timedOut })
    })
  })
}

/** Parses consecutive answers; stops at the first thing that is not a well-formed answer. */
export function parseAnswers(bytes: Buffer, head: boolean): { answers: RawAnswer[]; malformed?: string } {
  const answers: RawAnswer[] = []
  let offset = 0
  while (offset < bytes.length) {
    const end = bytes.indexOf('\r\n\r\n', offset)
    if (end === -1) return { answers, malformed: `an answer without the end of its headers: ${JSON.stringify(bytes.subarray(offset, offset + 200).toString('latin1'))}` }
    const lines = bytes.subarray(offset, end).toString('latin1').split('\r\n')
    const statusLine = /^HTTP\/1\.1 ([1-5]\d\d) [\x20-\x7e]*$/.exec(lines[0])
    if (!statusLine) return { answers, malformed: `a bad status line: ${JSON.stringify(lines[0])}` }
    const status = Number(statusLine[1])
    const headers: Record<string, string> = {}
    for (const line of lines.slice(1)) {
      const header = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*([\x20-\x7e\x80-\xff\t]*?)[ \t]*$/.exec(line)
      if (!header) return { answers, malformed: `a bad header line: ${JSON.stringify(line)}` }
      const name = header[1].toLowerCase()
      headers[name] = name in headers ? `${headers[name]}, ${header[2]}` : header[2]
    }
    offset = end + 4
    if (status < 200) continue // 100 Continue: the real answer follows
    const bodiless = head || status === 204 || status === 304
    let body: Buffer = Buffer.alloc(0)
    if (headers['transfer-encoding'] !== undefined) {
      if (headers['transfer-encoding'].toLowerCase() !== 'chunked') return { answers, malformed: `Transfer-Encoding ${headers['transfer-encoding']}` }
      if (headers['content-length'] !== undefined) return { answers, malformed: 'both Content-Length and Transfer-Encoding' }
      const decoded = decodeChunked(bytes, offset)
      if ('malformed' in decoded) return { answers, malformed: decoded.malformed }
      body = decoded.body
      offset = decoded.next
    } else if (headers['content-length'] !== undefined) {
      if (!/^\d+$/.test(headers['content-length'])) return { answers, malformed: `Content-Length ${headers['content-length']}` }
      const length = Number(headers['content-length'])
      if (!bodiless) {
        if (offset + length > bytes.length) return { answers, malformed: `a body shorter (${bytes.length - offset}) than its Content-Length (${length})` }
        body = bytes.subarray(offset, offset + length)
        offset += length
      }
    } else if (!bodiless) {
      // No framing: the body runs to the close of the connection (RFC 9112 §6.3).
      body = bytes.subarray(offset)
      offset = bytes.length
    }
    answers.push({ status, headers, body })
  }
  return { answers }
}

function decodeChunked(bytes: Buffer, start: number): { body: Buffer; next: number } | { malformed: string } {
  const parts: Buffer[] = []
  let offset = start
  for (;;) {
    const lineEnd = bytes.indexOf('\r\n', offset)
    if (lineEnd === -1) return { malformed: 'a chunked body cut short' }
    const size = parseInt(bytes.subarray(offset, lineEnd).toString('latin1'), 16)
    if (!Number.isFinite(size)) return { malformed: 'a bad chunk size' }
    offset = lineEnd + 2
    if (size === 0) {
      if (bytes.subarray(offset, offset + 2).toString() !== '\r\n') return { malformed: 'a chunked body without its last CRLF' }
      return { body: Buffer.concat(parts), next: offset + 2 }
    }
    if (offset + size + 2 > bytes.length) return { malformed: 'a chunk cut short' }
    parts.push(bytes.subarray(offset, offset + size))
    offset += size + 2
  }
}

/**
 * The bytes of one HTTP/1.1 request addressed to 127.0.0.1, for sending raw
 * (several may be joined and sent in one write: pipelining). A body is sent as
 * JSON with its Content-Length; `close` asks the server to close after answering.
 */
export function rawRequest(method: string, target: string, options: { body?: unknown; headers?: Record<string, string>; close?: boolean } = {}): string {
  let head = `${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\n`
  for (const [name, value] of Object.entries(options.headers ?? {})) head += `${name}: ${value}\r\n`
  const body = options.body === undefined ? '' : JSON.stringify(options.body)
  if (options.body !== undefined) head += `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n`
  if (options.close) head += 'Connection: close\r\n'
  return head + '\r\n' + body
}

/** An answer read whole, its body as bytes. */
export interface ByteAnswer {
  status: number
  headers: IncomingHttpHeaders
  body: Buffer
}

/** Sends `path` exactly as written (no client-side normalization), so `..`, `\` and `%2e` reach the server. */
export function requestAsIs(port: number, path: string, method = 'GET', headers: Record<string, string> = {}): Promise<ByteAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end()
  })
}
