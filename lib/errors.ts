import type { ServerResponse } from 'node:http'
import { STATUS_CODES } from 'node:http'

/**
 * An error that knows its HTTP answer. Thrown where a problem is found and
 * turned into one `application/problem+json` answer (RFC 9457) by `sendProblem`.
 */
export class HttpError extends Error {
  readonly status: number
  readonly detail: string
  readonly headers: Record<string, string>

  constructor(status: number, detail: string, headers: Record<string, string> = {}) {
    super(detail)
    this.name = 'HttpError'
    this.status = status
    this.detail = detail
    this.headers = headers
  }
}

/** Writes an RFC 9457 problem answer. Never includes a stack or a file-system path. */
export function sendProblem(res: ServerResponse, error: HttpError, head = false): void {
  if (res.headersSent) {
    res.destroy()
    return
  }
  const body = problemJson(error)
  res.statusCode = error.status
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value)
  res.setHeader('Content-Type', 'application/problem+json')
  res.setHeader('Content-Length', Buffer.byteLength(body))
  res.end(head ? undefined : body)
}

/** The RFC 9457 body of an error: `type`, `title`, `status` and `detail`, nothing else. */
export function problemJson(error: HttpError): string {
  return JSON.stringify({
    type: 'about:blank',
    title: STATUS_CODES[error.status] ?? 'Error',
    status: error.status,
    detail: error.detail,
  })
}

/** Turns anything thrown into an HttpError; unknown faults become a 500 that says nothing internal. */
export function toHttpError(error: unknown): HttpError {
  if (error instanceof HttpError) return error
  return new HttpError(500, 'The server met an unexpected fault; it has been logged and the server keeps serving.')
}
