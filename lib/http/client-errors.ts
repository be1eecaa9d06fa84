import type { Server, ServerResponse } from 'node:http'
import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import { HttpError } from '../http-error.ts'
import { problemJson, quotedHeader, sendProblem } from './problem.ts'

/**
 * Node's HTTP parser refuses some requests before any handler sees them: a
 * malformed request line or header, headers that are too large, a request
 * that is too slow. Node's own answer has no body; this one is
 * problem+json like every other error (docs/http-api.md, "Requests and errors"), and it never writes over an
 * answer still in progress on the same connection.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException & { reason?: unknown }, socket: Socket) => refuseAfterAnswer(error, socket))
  // Nobody listening for CONNECT means node drops the connection without a word; restdir is no proxy.
  server.on('connect', (_req, socket: Socket) => {
    socket.on('error', () => {})
    socket.end(rawProblem(new HttpError(405, 'restdir is not a proxy: CONNECT is not supported.')))
  })
  // Node's own 417 has no body (RFC 9110 §10.1.1: a server may refuse an expectation it does not know).
  server.on('checkExpectation', (req, res: ServerResponse) => {
    const expectation = String(req.headers.expect).slice(0, 100)
    sendProblem(res, new HttpError(417, `Expect: "${quotedHeader(expectation)}" is not understood; the only expectation restdir meets is 100-continue.`, { Connection: 'close' }))
  })
}

/**
 * Refuses once the answer in progress on the connection, if any, has gone
 * out. Node attaches that answer to the socket as `_httpMessage` (its own
 * clientError default reads it the same way); reading it here costs nothing
 * per request, where tracking every request cost some 12 µs of CPU each.
 */
function refuseAfterAnswer(error: NodeJS.ErrnoException & { reason?: unknown }, socket: Socket): void {
  const inProgress = answerOn(socket)
  if (!inProgress) return refuse(error, socket)
  if (!inProgress.req.complete) return cutOff(error, socket, inProgress)
  inProgress.once('close', () => {
    // A pipelined answer may follow this one on the socket: wait for it too.
    const next = answerOn(socket)
    if (next && next !== inProgress) refuseAfterAnswer(error, socket)
    else refuse(error, socket)
  })
}

function answerOn(socket: Socket): ServerResponse | undefined {
  return (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage ?? undefined
}

/**
 * The request in progress is the broken or slow one: its body is still
 * arriving when the parser fails on it (a bad chunk) or the time-out strikes
 * (a slow-loris). Waiting for its answer would wait for a body that cannot
 * come whole, so it gets its problem answer now, unless an answer has begun,
 * and the connection closes at once: no late byte can complete the request
 * and have it stored.
 */
function cutOff(error: NodeJS.ErrnoException, socket: Socket, res: ServerResponse): void {
  if (!res.headersSent && socket.writable) socket.write(rawProblem(problemFor(error)))
  socket.destroy()
}

function refuse(error: NodeJS.ErrnoException & { reason?: unknown }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy()
    return
  }
  socket.end(rawProblem(problemFor(error)))
}

/** A whole problem+json answer as bytes for the socket, for requests that never reached a ServerResponse. */
function rawProblem(problem: HttpError): string {
  const body = problemJson(problem)
  return (
    `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status]}\r\n` +
    'Content-Type: application/problem+json\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    'Connection: close\r\n\r\n' +
    body
  )
}

function problemFor(error: NodeJS.ErrnoException & { reason?: unknown }): HttpError {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return new HttpError(431, 'The request headers are larger than the server accepts; send fewer or shorter headers.')
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new HttpError(408, 'The request took too long to arrive and was cut off; send it again, whole.')
    default: {
      // llhttp's reason is a fixed phrase such as "Invalid header token"; it never carries request data.
      const reason = typeof error.reason === 'string' ? ` (${error.reason.replace(/[^\w .,'-]/g, '')})` : ''
      return new HttpError(400, `The request is not valid HTTP/1.1${reason}; check the request line and the headers.`)
    }
  }
}
