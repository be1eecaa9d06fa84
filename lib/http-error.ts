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
