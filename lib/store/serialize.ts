import { createHash } from 'node:crypto'
import { HttpError } from '../errors.ts'
import { joinPath } from '../path.ts'
import { inexactJson } from '../json-syntax.ts'
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
  return `"${createHash('sha1').update(stored).digest('base64url').slice(0, 22)}"`
}

/** Parses a stored document; a file that a person broke is a 500 that says which node to repair. */
export function parseStoredDoc(text: string, path: NodePath): Doc {
  let value: unknown
  // Editors on Windows may save a byte-order mark, which JSON.parse refuses (RFC 8259 §8.1 allows ignoring it).
  const json = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
  try {
    value = JSON.parse(json)
  } catch {
    throw new HttpError(500, `The document file for ${joinPath(path)} is not valid JSON; fix or delete it.`)
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new HttpError(500, `The document file for ${joinPath(path)} holds JSON that is not an object; fix or delete it.`)
  }
  // A hand-edited file holds the same values a request could: never served changed (README, "Requests and errors").
  const problems = inexactJson(json, value, 5)
  if (problems.length > 0) {
    const list = problems.map((problem) => `${problem.path}: ${problem.message}`).join('; ')
    throw new Error(`The document file for ${joinPath(path)} holds ${problems.length === 1 ? 'a value' : 'values'} that JSON.parse would change: ${list}; fix the file.`)
  }
  return value as Doc
}
