import { canonical, mergePatchModel } from './random.ts'

// The fuzz test's own model of what the server must do, written from docs/http-api.md
// ("Behaviour", "Security") rather than from the server's code: how a path is split,
// how a body is read, which guard answers first, and what each method does to
// the store. The test compares every answer, and the store at the end, with it.

export type Doc = Record<string, unknown>

export const MAX_BODY = 64 * 1024
export const MAX_JSON_DEPTH = 64
const MAX_PATH = 8192
const MAX_SEGMENT = 1024
const MAX_DEPTH = 32

/** Decoded segments, or the status that splitting the path must answer. */
export type PathOutcome = { segments: string[] } | { status: 400 | 414 }

/** docs/http-api.md, "The generic data API" and "Security": percent-decoding per segment, no empty segments, and the three path limits. */
export function splitPathModel(rawPath: string): PathOutcome {
  if (rawPath.length > MAX_PATH) return { status: 414 }
  if (!rawPath.startsWith('/')) return { status: 400 }
  const raws = rawPath.slice(1).split('/')
  if (raws.length > 0 && raws[raws.length - 1] === '') raws.pop() // a trailing slash is ignored
  const segments: string[] = []
  for (const raw of raws) {
    if (raw === '') return { status: 400 }
    // Dot-segments sent as they are name nothing (docs/http-api.md, "The generic data API").
    if (raw === '.' || raw === '..') return { status: 400 }
    if (raw.length > MAX_SEGMENT) return { status: 414 }
    try {
      segments.push(decodeURIComponent(raw))
    } catch {
      return { status: 400 }
    }
    if (segments.length > MAX_DEPTH) return { status: 414 }
  }
  return { segments }
}

/** Whether a POST to `rawPath` makes a document whose own URL, 13 characters longer and one segment deeper, is within the limits. */
export function newChildFits(rawPath: string): boolean {
  const child = splitPathModel(rawPath.replace(/\/$/, '') + '/' + 'x'.repeat(12))
  return !('status' in child)
}

/** A body as docs/http-api.md ("Requests and errors") reads it: the object it stands for, or the status that refuses it. */
export type BodyOutcome = { body: Doc } | { status: 400 | 413 | 415 }

export function readBodyModel(contentType: string | undefined, bytes: Buffer, declaredLength: number | undefined): BodyOutcome {
  if (declaredLength !== undefined && declaredLength > MAX_BODY) return { status: 413 }
  if (bytes.length > MAX_BODY) return { status: 413 }
  const kind = bodyKind(contentType)
  if (bytes.length === 0 && kind !== 'unsupported') return { body: {} }
  if (kind === 'missing' || kind === 'unsupported') return { status: 415 }
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes)
  } catch {
    return { status: 400 }
  }
  if (kind === 'form') return { body: Object.fromEntries(new URLSearchParams(text)) }
  if (nestingDepth(text) > MAX_JSON_DEPTH) return { status: 400 }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return { status: 400 }
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { status: 400 }
  if (!keptExactly(text)) return { status: 400 }
  return { body: value as Doc }
}

function bodyKind(header: string | undefined): 'json' | 'form' | 'missing' | 'unsupported' {
  if (header === undefined || header.trim() === '') return 'missing'
  const type = header.split(';')[0].trim().toLowerCase()
  if (type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'))) return 'json'
  if (type === 'application/x-www-form-urlencoded') return 'form'
  return 'unsupported'
}

/** The deepest nesting of brackets outside strings, however broken the rest of the text is. */
export function nestingDepth(text: string): number {
  let depth = 0
  let deepest = 0
  let inString = false
  for (let index = 0; index < text.length; index++) {
    const char = text[index]
    if (inString) {
      if (char === '\\') index++
      else if (char === '"') inString = false
    } else if (char === '"') inString = true
    else if (char === '{' || char === '[') deepest = Math.max(deepest, ++depth)
    else if (char === '}' || char === ']') depth--
  }
  return deepest
}

interface Stored {
  segments: string[]
  doc: Doc
  etag: string
}

/** The documents the store must hold, by path. */
export class StoreModel {
  private readonly docs = new Map<string, Stored>()

  get size(): number {
    return this.docs.size
  }

  all(): Stored[] {
    return [...this.docs.values()]
  }

  get(segments: readonly string[]): Stored | undefined {
    return this.docs.get(JSON.stringify(segments))
  }

  set(segments: readonly string[], doc: Doc, etag: string): void {
    this.docs.set(JSON.stringify(segments), { segments: [...segments], doc, etag })
  }

  /** A node exists while it has a document or a document somewhere below it. */
  exists(segments: readonly string[]): boolean {
    return this.get(segments) !== undefined || this.below(segments).length > 0
  }

  /** Names of the nodes one level below, in code-unit order (docs/http-api.md, "The generic data API"). */
  childNames(segments: readonly string[]): string[] {
    const names = new Set(this.below(segments).map((stored) => stored.segments[segments.length]))
    return [...names].sort()
  }

  /** The documents of the children that have one, in id order. */
  collection(segments: readonly string[]): Doc[] {
    return this.childNames(segments)
      .map((name) => this.get([...segments, name]))
      .filter((stored): stored is Stored => stored !== undefined)
      .map((stored) => stored.doc)
  }

  /** Removes a node and everything below it. */
  remove(segments: readonly string[]): void {
    this.docs.delete(JSON.stringify(segments))
    for (const stored of this.below(segments)) this.docs.delete(JSON.stringify(stored.segments))
  }

  private below(segments: readonly string[]): Stored[] {
    return this.all().filter(
      (stored) => stored.segments.length > segments.length && segments.every((segment, index) => stored.segments[index] === segment),
    )
  }
}

/** If-Match (strong) and If-None-Match (weak) as RFC 9110 §13.1.1–§13.1.2 compare them; true when the write may go on. */
export function preconditionsHold(current: Stored | undefined, ifMatch: string | undefined, ifNoneMatch: string | undefined): boolean {
  const tags = (header: string) => header.split(',').map((tag) => tag.trim())
  if (ifMatch !== undefined) {
    if (!current) return false
    if (ifMatch.trim() !== '*' && !tags(ifMatch).includes(current.etag)) return false
  }
  if (ifNoneMatch !== undefined && current) {
    if (ifNoneMatch.trim() === '*') return false
    if (tags(ifNoneMatch).some((tag) => tag.replace(/^W\//, '') === current.etag)) return false
  }
  return true
}

export function withoutId(doc: Doc): Doc {
  const copy: Doc = {}
  for (const key of Object.keys(doc)) {
    if (key !== 'id') Object.defineProperty(copy, key, { value: doc[key], enumerable: true, writable: true, configurable: true })
  }
  return copy
}

/** `{ id, ...rest }` built without assignment, so a `__proto__` key stays data. */
export function withId(id: string, doc: Doc): Doc {
  const result: Doc = { id }
  for (const key of Object.keys(doc)) {
    if (key !== 'id') Object.defineProperty(result, key, { value: doc[key], enumerable: true, writable: true, configurable: true })
  }
  return result
}

export function mergedDocument(id: string, current: Doc, patch: Doc): Doc {
  return withId(id, mergePatchModel(current, withoutId(patch)) as Doc)
}

export function sameJson(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b)
}

/** localhost, *.localhost, 127.0.0.0/8 and ::1, with or without a port (docs/http-api.md, "Security"). */
export function isLoopbackHostHeader(host: string): boolean {
  const lower = host.toLowerCase()
  const name = lower.startsWith('[') ? lower.slice(1, lower.indexOf(']')) : lower.replace(/:\d*$/, '')
  return name === 'localhost' || name.endsWith('.localhost') || /^127\.\d+\.\d+\.\d+$/.test(name) || name === '::1'
}

/** Loopback origins and the server's own are allowed by default (no --cors). */
export function originAllowedByDefault(origin: string, host: string): boolean {
  let url: URL
  try {
    url = new URL(origin)
  } catch {
    return false
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false
  return isLoopbackHostHeader(url.host) || url.host === host.toLowerCase()
}

// ---------------------------------------------------------------- exact numbers and repeated keys
// A body is stored exactly as sent or refused (docs/http-api.md, "Requests and errors"). This model
// judges a JSON text its own way: each number as an integer mantissa times a power of ten,
// compared with the same for the shortest text of the double it parses to.

/** Whether a JSON text that parses keeps every number and every key through JSON.parse. */
export function keptExactly(text: string): boolean {
  let index = 0
  const space = () => {
    while (' \t\n\r'.includes(text[index] ?? 'x')) index++
  }
  const string = (): string => {
    const start = index++
    while (text[index] !== '"') index += text[index] === '\\' ? 2 : 1
    index++
    return JSON.parse(text.slice(start, index)) as string
  }
  const value = (): boolean => {
    space()
    const char = text[index]
    if (char === '{') {
      index++
      const keys = new Set<string>()
      space()
      if (text[index] === '}') { index++; return true }
      for (;;) {
        space()
        const key = string()
        if (keys.has(key)) return false
        keys.add(key)
        space()
        index++ // ':'
        if (!value()) return false
        space()
        if (text[index++] === '}') return true
      }
    }
    if (char === '[') {
      index++
      space()
      if (text[index] === ']') { index++; return true }
      for (;;) {
        if (!value()) return false
        space()
        if (text[index++] === ']') return true
      }
    }
    if (char === '"') { string(); return true }
    const token = /^-?\d+(\.\d+)?([eE][+-]?\d+)?|^(true|false|null)/.exec(text.slice(index, index + 2000))![0]
    index += token.length
    return /^[tfn]/.test(token) || numberKeptExactly(token)
  }
  return value()
}

function numberKeptExactly(token: string): boolean {
  const number = Number(token)
  if (!Number.isFinite(number) || Object.is(number, -0)) return false
  return scaled(token) === scaled(String(number))
}

/** `digits×10^exponent` with no zero at either end of the digits: the same for two texts of one decimal value. */
function scaled(text: string): string {
  const [, sign, whole, fraction = '', exponent = '0'] = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]?\d+))?$/i.exec(text)!
  let digits = (whole + fraction).replace(/^0+/, '')
  let power = Number(exponent) - fraction.length
  while (digits.endsWith('0')) {
    digits = digits.slice(0, -1)
    power++
  }
  return digits === '' ? '0' : `${sign}${digits}×10^${power}`
}
