import type { IncomingHttpHeaders } from 'node:http'
import { HttpError } from '../http-error.ts'
import { quotedHeader } from './problem.ts'

/*
 * Conditional requests (RFC 9110 §13), for documents (lib/http/respond.ts, and the
 * writes of lib/resources/) and static files (lib/static/static.ts) alike: entity-tags
 * are parsed and compared here and nowhere else, each rule a small function.
 */

/** An entity-tag (RFC 9110 §8.8.3): its opaque part with the quotes, and whether it is weak. */
export interface EntityTag {
  weak: boolean
  opaque: string
}

/** The validators an answer carries: a strong ETag, and for files a Last-Modified date. */
export interface Validators {
  etag: string
  lastModified?: string
}

/**
 * Reads one entity-tag (RFC 9110 §8.8.3): `W/` (case-sensitive) for a weak
 * one, then a quoted string of etagc characters — visible ASCII but `"`, and
 * obs-text. Undefined when the text is anything else.
 */
export function parseEntityTag(text: string): EntityTag | undefined {
  const end = scanEntityTag(text, 0)
  return end === text.length ? tagAt(text, 0, end) : undefined
}

/**
 * Reads an If-Match or If-None-Match value: `*`, or a comma-separated list of
 * entity-tags (RFC 9110 §13.1.1, §13.1.2) with optional whitespace and empty
 * elements (§5.6.1.2). A comma inside quotes belongs to its tag. Undefined for
 * a value that follows neither form; such a list matches nothing.
 */
export function parseEntityTagList(fieldValue: string): '*' | EntityTag[] | undefined {
  if (fieldValue.trim() === '*') return '*'
  const tags: EntityTag[] = []
  let index = 0
  let afterComma = true
  for (;;) {
    while (fieldValue[index] === ' ' || fieldValue[index] === '\t') index++
    if (index === fieldValue.length) return tags
    if (fieldValue[index] === ',') {
      index++
      afterComma = true
      continue
    }
    // Two tags need a comma between them.
    if (!afterComma) return undefined
    const end = scanEntityTag(fieldValue, index)
    if (end === undefined) return undefined
    tags.push(tagAt(fieldValue, index, end))
    index = end
    afterComma = false
  }
}

/** Where the entity-tag starting at `start` ends, or undefined when none starts there. */
function scanEntityTag(text: string, start: number): number | undefined {
  let index = text.startsWith('W/', start) ? start + 2 : start
  if (text[index] !== '"') return undefined
  for (index++; index < text.length; index++) {
    const code = text.charCodeAt(index)
    if (code === 0x22) return index + 1
    // etagc = %x21 / %x23-7E / obs-text
    if (code < 0x21 || code === 0x7f || code > 0xff) return undefined
  }
  return undefined
}

function tagAt(text: string, start: number, end: number): EntityTag {
  const weak = text.startsWith('W/', start)
  return { weak, opaque: text.slice(weak ? start + 2 : start, end) }
}

/** Strong comparison (RFC 9110 §8.8.3.2): neither tag is weak and their opaque parts are equal. */
export function strongMatch(a: EntityTag, b: EntityTag): boolean {
  return !a.weak && !b.weak && a.opaque === b.opaque
}

/** Weak comparison (RFC 9110 §8.8.3.2): the opaque parts are equal, whatever the `W/` prefixes. */
export function weakMatch(a: EntityTag, b: EntityTag): boolean {
  return a.opaque === b.opaque
}

/**
 * Does an If-Match or If-None-Match value name the current representation?
 * `*` names any that exists; nothing names one that does not; a malformed list names none.
 */
function listMatches(fieldValue: string, current: string | undefined, compare: typeof strongMatch): boolean {
  if (current === undefined) return false
  const list = parseEntityTagList(fieldValue)
  if (list === '*') return true
  const tag = parseEntityTag(current)
  return list !== undefined && tag !== undefined && list.some((listed) => compare(listed, tag))
}

/**
 * If-Match (RFC 9110 §13.1.1): true when the condition holds, that is when
 * the list names the current version by strong comparison, or is `*` and a
 * current version exists.
 */
export function ifMatchHolds(fieldValue: string, current: string | undefined): boolean {
  return listMatches(fieldValue, current, strongMatch)
}

/**
 * If-None-Match (RFC 9110 §13.1.2): true when the condition holds, that is
 * when no tag of the list names the current version by weak comparison, and
 * for `*` when there is no current version.
 */
export function ifNoneMatchHolds(fieldValue: string, current: string | undefined): boolean {
  return !listMatches(fieldValue, current, weakMatch)
}

/** The request headers that make a write conditional. */
export type WriteConditionHeaders = Pick<IncomingHttpHeaders, 'if-match' | 'if-none-match'>

/**
 * The preconditions of a state-changing request (RFC 9110 §13.2.2, steps 1
 * and 3): If-Match, then If-None-Match, each a 412 when it fails. Undefined
 * when the request has neither, so that it costs nothing. The check is run by
 * the data layer against the version it is about to replace, in the node's
 * turn and after the write's own checks, so that a request that would fail
 * anyway keeps its own answer (§13.2.1).
 */
export function writePreconditions(headers: WriteConditionHeaders): ((current: { etag: string } | undefined) => void) | undefined {
  const { 'if-match': ifMatch, 'if-none-match': ifNoneMatch } = headers
  if (ifMatch === undefined && ifNoneMatch === undefined) return undefined
  return (current) => {
    if (ifMatch !== undefined && !ifMatchHolds(ifMatch, current?.etag)) {
      throw new HttpError(412, current
        ? `If-Match ${quotedHeader(ifMatch)} does not match the current version ${current.etag}; read the document again and retry.`
        : 'If-Match was sent but there is no document here.')
    }
    if (ifNoneMatch !== undefined && !ifNoneMatchHolds(ifNoneMatch, current?.etag)) {
      throw new HttpError(412, ifNoneMatch.trim() === '*'
        ? 'If-None-Match: * asks to create only, but a document exists here already.'
        : 'If-None-Match matches the current version of the document.')
    }
  }
}

/**
 * If-Modified-Since (RFC 9110 §13.1.3): true when the representation changed
 * after the given date, at the one-second precision of HTTP dates. A value
 * that is not a date is ignored, which counts as changed.
 */
export function modifiedSince(fieldValue: string, lastModified: string): boolean {
  const since = Date.parse(fieldValue)
  return Number.isNaN(since) || Date.parse(lastModified) > since
}

/**
 * RFC 9110 §13.2.2, steps 3 and 4 for GET and HEAD: true when the answer is a
 * 304. If-None-Match, when present, alone decides (§13.1.2); otherwise
 * If-Modified-Since does, for a representation with a Last-Modified date (§13.1.3).
 */
export function isNotModified(headers: Pick<IncomingHttpHeaders, 'if-none-match' | 'if-modified-since'>, validators: Validators): boolean {
  const { 'if-none-match': ifNoneMatch, 'if-modified-since': ifModifiedSince } = headers
  if (ifNoneMatch !== undefined) return !ifNoneMatchHolds(ifNoneMatch, validators.etag)
  if (ifModifiedSince === undefined || validators.lastModified === undefined) return false
  return !modifiedSince(ifModifiedSince, validators.lastModified)
}

/**
 * If-Range (RFC 9110 §13.1.5): a Range is honoured only while the client's
 * copy is still current — an entity-tag by strong comparison (so a weak tag
 * never matches), or a date that exactly matches Last-Modified. A value
 * starting with a quote or `W/` is a tag, anything else a date. Without
 * If-Range the Range always applies; one sent twice cannot hold.
 */
export function ifRangeHolds(fieldValue: string | string[] | undefined, validators: Validators): boolean {
  if (fieldValue === undefined) return true
  if (typeof fieldValue !== 'string') return false
  const ifRange = fieldValue.trim()
  if (ifRange.startsWith('"') || ifRange.startsWith('W/')) {
    const tag = parseEntityTag(ifRange)
    const current = parseEntityTag(validators.etag)
    return tag !== undefined && current !== undefined && strongMatch(tag, current)
  }
  return validators.lastModified !== undefined && ifRange === validators.lastModified
}
