import type { Server, ServerResponse } from 'node:http'
import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import { HttpError, problemJson } from './errors.ts'

/**
 * Node's HTTP parser refuses some requests before any handler sees them: a
 * malformed request line or header, headers that are too large, a request
 * that is too slow. Node's own answer has no body; this one is
 * problem+json like every other error (SPEC §8), and it never writes over an
 * answer still in progress on the same connection.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException & { reason?: unknown }, socket: Socket) => refuseAfterAnswer(error, socket))
}

/**
 * Refuses once the answer in progress on the connection, if any, has gone
 * out. Node attaches that answer to the socket as `_httpMessage` (its own
 * clientError default reads it the same way); reading it here costs nothing
 * per request, where tracking every request cost some 12 µs of CPU each.
 */
function refuseAfterAnswer(error: NodeJS.ErrnoException & { reason?: unknown }, socket: Socket): void {
  const inProgress = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage
  if (!inProgress) return refuse(error, socket)
  inProgress.once('close', () => {
    // A pipelined answer may follow this one on the socket: wait for it too.
    const next = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage
    if (next && next !== inProgress) refuseAfterAnswer(error, socket)
    else refuse(error, socket)
  })
}

function refuse(error: NodeJS.ErrnoException & { reason?: unknown }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy()
    return
  }
  const problem = problemFor(error)
  const body = problemJson(problem)
  socket.end(
    `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status]}\r\n` +
      'Content-Type: application/problem+json\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
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
