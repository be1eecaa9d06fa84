import crypto from 'node:crypto'
import { inexactJson } from '../json/syntax.ts'
import { isObject } from '../json/values.ts'
import { StoreError } from './errors.ts'
import type { Doc, NodePath } from './store.ts'

/** A document as both stores keep it: pretty JSON with a final newline, so a person can read and edit the file. */
export function serializeDoc(doc: Doc): string {
  return JSON.stringify(doc, null, 2) + '\n'
}

/**
 * A strong ETag (RFC 9110 §8.8.3) for a stored document: 22 base64url
 * characters (132 bits) of the SHA-1 of its exact bytes, so it changes
 * whenever the document does, hand edits included, and only then.
 */
export function etagOf(stored: string | Buffer): string {
  return `"${sha1(stored).slice(0, 22)}"`
}

/** crypto.hash (Node 20.12 and later) makes one small digest at about half the cost of a Hash object. */
const sha1: (bytes: string | Buffer) => string =
  typeof crypto.hash === 'function' ? (bytes) => crypto.hash('sha1', bytes, 'base64url') : (bytes) => crypto.createHash('sha1').update(bytes).digest('base64url')

/** Parses a stored document; a file that a person broke is a 'bad-document' StoreError that says what is wrong. */
export function parseStoredDoc(text: string, path: NodePath): Doc {
  // Editors on Windows may save a byte-order mark, which JSON.parse refuses (RFC 8259 §8.1 allows ignoring it).
  const json = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
  if (json.trim() === '') throw new StoreError('bad-document', path, 'is empty')
  let value: unknown
  try {
    value = JSON.parse(json)
  } catch {
    throw new StoreError('bad-document', path, 'is not valid JSON')
  }
  if (!isObject(value)) {
    throw new StoreError('bad-document', path, `holds ${Array.isArray(value) ? 'an array' : 'JSON that is not an object'}`)
  }
  // A hand-edited file holds the same values a request could: never served changed (docs/http-api.md, "Requests and errors").
  const problems = inexactJson(json, value, 5)
  if (problems.length > 0) {
    const list = problems.map((problem) => `${problem.path}: ${problem.message}`).join('; ')
    throw new StoreError('bad-document', path, `holds ${problems.length === 1 ? 'a value' : 'values'} that would not be served as written (${list})`)
  }
  return value as Doc
}
