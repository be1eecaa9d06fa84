// Types of curl.js, for the specs that test it from TypeScript.

export function shellQuote(text: string): string

export interface CurlRequest {
  method: string
  /** Absolute: the server's origin, the API prefix and the path. */
  url: string
  headers?: [name: string, value: string][]
  body?: string
}

export function curlCommand(request: CurlRequest): string
