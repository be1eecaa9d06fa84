import * as assert from 'uvu/assert'
import { STATUS_CODES } from 'node:http'
import type { Answer } from './helpers.ts'

/**
 * Asserts an RFC 9457 problem answer: the status, `application/problem+json`,
 * exactly `type`, `title`, `status` and `detail`, and a detail a person can act on.
 */
export function assertProblem(answer: Answer, status: number, detail?: RegExp): void {
  assert.is(answer.status, status, `expected ${status}, got ${answer.status}: ${answer.text}`)
  assert.is(answer.headers['content-type'], 'application/problem+json')
  assert.ok(answer.json, `the body is JSON: ${answer.text}`)
  assert.equal(Object.keys(answer.json).sort(), ['detail', 'status', 'title', 'type'])
  assert.is(answer.json.type, 'about:blank')
  assert.is(answer.json.title, STATUS_CODES[status])
  assert.is(answer.json.status, status)
  assert.type(answer.json.detail, 'string')
  assert.ok(answer.json.detail.length > 10, `the detail says something: ${answer.json.detail}`)
  if (detail) assert.match(answer.json.detail, detail)
}

/** Asserts a JSON answer with its status and body. */
export function assertJson(answer: Answer, status: number, body?: unknown): void {
  assert.is(answer.status, status, `expected ${status}, got ${answer.status}: ${answer.text}`)
  assert.is(answer.headers['content-type'], 'application/json; charset=utf-8')
  assert.is(answer.headers['content-length'], String(Buffer.byteLength(answer.text)))
  if (body !== undefined) assert.equal(answer.json, body)
}

/** A strong entity-tag (RFC 9110 §8.8.3): a quoted string without the W/ prefix. */
export function assertStrongEtag(answer: Answer): string {
  const etag = answer.headers.etag
  assert.type(etag, 'string')
  assert.match(etag as string, /^"[^"]+"$/)
  return etag as string
}

/**
 * A `Link` header with each URL's origin left out: paged answers link
 * absolutely, each with its own server's origin (docs/http-api.md, "Listing
 * queries"), so two servers' links compare equal only without it.
 */
export function linkWithoutOrigin(link: string | string[] | undefined): string {
  return String(link).replace(/<https?:\/\/[^/>]+/g, '<')
}

