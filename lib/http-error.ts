/**
 * An error that knows its HTTP answer. Thrown where a problem is found and
 * turned into one `application/problem+json` answer (RFC 9457) by `sendProblem`.
 */
export class HttpError extends Error {
  readonly status: number
  readonly detail: string
  readonly headers: Record<string, string>
  /** Extension members of the problem (RFC 9457 §3.2), such as a batch's failed request's `index`. */
  readonly extensions: Record<string, unknown>

  constructor(status: number, detail: string, headers: Record<string, string> = {}, extensions: Record<string, unknown> = {}) {
    super(detail)
    this.name = 'HttpError'
    this.status = status
    this.detail = detail
    this.headers = headers
    this.extensions = extensions
  }
}
