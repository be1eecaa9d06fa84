import { defineValue, isObject, jsonKindOf, type JsonObject } from './values.ts'

/*
 * JSON Patch (RFC 6902) over JSON Pointers (RFC 6901), with no HTTP in it:
 * every refusal is a JsonPatchError that names the operation, and the
 * resources turn it into a 400 or, for a failed `test`, a 409
 * (docs/http-api.md, "PATCH").
 */

export type PatchOp = 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test'

/** One operation, checked: its pointers split into reference tokens. */
export interface PatchOperation {
  op: PatchOp
  path: string[]
  /** `move` and `copy` only. */
  from?: string[]
  /** `add`, `replace` and `test` only. */
  value?: unknown
}

export interface PatchLimits {
  /** Deepest nesting a patched document may reach (as a body may: docs/http-api.md, "Requests and errors"). */
  maxDepth: number
  /** Most values `copy` operations may duplicate in one patch: copying the whole document into itself doubles it. */
  maxCopiedValues: number
}

/** Why a patch is not applied: `invalid` is the patch's fault (400); `test-failed` is a `test` that did not hold (409). */
export class JsonPatchError extends Error {
  readonly kind: 'invalid' | 'test-failed'
  /** The operation's index in the patch (from 0), and its `op` when it has one. */
  readonly index: number
  readonly op: string | undefined

  constructor(kind: 'invalid' | 'test-failed', index: number, op: string | undefined, reason: string) {
    super(`Operation ${index}${op === undefined ? '' : ` (${JSON.stringify(op)})`}: ${reason}`)
    this.name = 'JsonPatchError'
    this.kind = kind
    this.index = index
    this.op = op
  }
}

const OPS: readonly string[] = ['add', 'remove', 'replace', 'move', 'copy', 'test']

/**
 * Checks a patch document (RFC 6902 §3–§4) before any document is read: an
 * array of objects, each with a known `op`, a `path` (and a `from`) that is a
 * JSON Pointer, and a `value` where the op needs one. Members it does not know
 * are ignored (§4).
 */
export function parseJsonPatch(patch: unknown): PatchOperation[] {
  if (!Array.isArray(patch)) throw new JsonPatchError('invalid', 0, undefined, `a JSON Patch is an array of operations, not ${jsonKindOf(patch)}.`)
  return patch.map((operation: unknown, index) => {
    if (!isObject(operation)) throw new JsonPatchError('invalid', index, undefined, `an operation is a JSON object, not ${jsonKindOf(operation)}.`)
    const op = Object.hasOwn(operation, 'op') ? operation.op : undefined
    if (typeof op !== 'string') throw new JsonPatchError('invalid', index, undefined, 'it has no "op" string.')
    const refuse = (reason: string) => new JsonPatchError('invalid', index, op, reason)
    if (!OPS.includes(op)) throw refuse(`"op" must be one of ${OPS.join(', ')}.`)
    const parsed: PatchOperation = { op: op as PatchOp, path: pointerMember(operation, 'path', refuse) }
    if (op === 'move' || op === 'copy') parsed.from = pointerMember(operation, 'from', refuse)
    if (op === 'add' || op === 'replace' || op === 'test') {
      if (!Object.hasOwn(operation, 'value')) throw refuse('it has no "value".')
      parsed.value = operation.value
    }
    return parsed
  })
}

function pointerMember(operation: JsonObject, member: 'path' | 'from', refuse: (reason: string) => Error): string[] {
  if (!Object.hasOwn(operation, member)) throw refuse(`it has no "${member}".`)
  const pointer = operation[member]
  if (typeof pointer !== 'string') throw refuse(`"${member}" must be a JSON Pointer string, not ${jsonKindOf(pointer)}.`)
  const tokens = parsePointer(pointer)
  if (!tokens) throw refuse(`"${member}" ${JSON.stringify(pointer)} is not a JSON Pointer: it is empty or starts with "/", and "~" only comes as "~0" or "~1" (RFC 6901 §3).`)
  return tokens
}

/** RFC 6901 §3–§4: `""` is the whole document; else `/`-separated tokens, `~1` read as `/` after `~0` as `~`. */
export function parsePointer(pointer: string): string[] | undefined {
  if (pointer === '') return []
  if (pointer[0] !== '/' || /~(?![01])/.test(pointer)) return undefined
  return pointer.slice(1).split('/').map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'))
}

export function formatPointer(tokens: readonly string[]): string {
  return tokens.map((token) => '/' + token.replaceAll('~', '~0').replaceAll('/', '~1')).join('')
}

/**
 * Applies the operations in order (RFC 6902 §3) to a copy of `document`, and
 * returns the copy: all of them or, on the first that fails, none (§5). The
 * document and the operations are never changed, so a retried write can apply
 * the same patch again.
 */
export function applyJsonPatch(document: unknown, operations: readonly PatchOperation[], limits: PatchLimits): unknown {
  const budget = { copied: 0 }
  let root = cloneJson(document)
  operations.forEach((operation, index) => {
    const refuse = (reason: string) => new JsonPatchError('invalid', index, operation.op, reason)
    const { path } = operation
    const insert = (value: unknown, replacing = false) => {
      if (path.length + depthOf(value) > limits.maxDepth) throw refuse(`the document would nest deeper than ${limits.maxDepth} levels.`)
      root = setAt(root, path, value, replacing, refuse)
    }
    switch (operation.op) {
      case 'add':
        return insert(cloneJson(operation.value))
      case 'remove':
        if (path.length === 0) throw refuse('the whole document cannot be removed.')
        return removeAt(root, path, refuse)
      case 'replace':
        valueAt(root, path, refuse)
        return insert(cloneJson(operation.value), true)
      case 'move': {
        const from = operation.from!
        const value = valueAt(root, from, refuse, 'from')
        if (from.length < path.length && from.every((token, at) => token === path[at])) {
          throw refuse(`"from" ${JSON.stringify(formatPointer(from))} cannot move into its own child ${JSON.stringify(formatPointer(path))} (RFC 6902 §4.4).`)
        }
        if (from.length === path.length && from.every((token, at) => token === path[at])) return
        removeAt(root, from, refuse)
        return insert(value)
      }
      case 'copy': {
        const value = valueAt(root, operation.from!, refuse, 'from')
        budget.copied += countValues(value)
        if (budget.copied > limits.maxCopiedValues) throw refuse(`the patch copies more than ${limits.maxCopiedValues} values in all.`)
        return insert(cloneJson(value))
      }
      case 'test': {
        const value = valueAt(root, path, refuse)
        if (!jsonEqual(value, operation.value)) {
          throw new JsonPatchError('test-failed', index, 'test', `the value at ${JSON.stringify(formatPointer(path))} is not ${shortJson(operation.value)}.`)
        }
      }
    }
  })
  return root
}

/** The value a pointer names; a location that does not exist is the patch's error (RFC 6902 §4.2–§4.6). */
function valueAt(root: unknown, tokens: readonly string[], refuse: (reason: string) => Error, member: 'path' | 'from' = 'path'): unknown {
  let value = root
  for (const [at, token] of tokens.entries()) {
    const index = Array.isArray(value) ? arrayIndex(token, value.length - 1) : undefined
    if (index !== undefined) value = (value as unknown[])[index]
    else if (isObject(value) && Object.hasOwn(value, token)) value = value[token]
    else throw refuse(`"${member}" ${JSON.stringify(formatPointer(tokens))} names nothing in the document (nothing at ${JSON.stringify(formatPointer(tokens.slice(0, at + 1)))}).`)
  }
  return value
}

/**
 * RFC 6902 §4.1 (and §4.3, `replacing` an existing value): the parent must
 * exist; an array takes an index up to its length, or `-` for its end, and
 * shifts what follows; an object member keeps its place when it is replaced.
 */
function setAt(root: unknown, tokens: readonly string[], value: unknown, replacing: boolean, refuse: (reason: string) => Error): unknown {
  if (tokens.length === 0) return value
  const parent = valueAt(root, tokens.slice(0, -1), refuse)
  const last = tokens[tokens.length - 1]
  if (Array.isArray(parent)) {
    const index = last === '-' ? parent.length : arrayIndex(last, parent.length)
    if (index === undefined) throw refuse(`${JSON.stringify(last)} is not an index of the array at ${JSON.stringify(formatPointer(tokens.slice(0, -1)))} (0 to ${parent.length}, or "-").`)
    parent.splice(index, replacing ? 1 : 0, value)
  } else if (isObject(parent)) defineValue(parent, last, value)
  else throw refuse(`${JSON.stringify(formatPointer(tokens.slice(0, -1)))} is ${jsonKindOf(parent)}, which has no members to add to.`)
  return root
}

function removeAt(root: unknown, tokens: readonly string[], refuse: (reason: string) => Error): void {
  valueAt(root, tokens, refuse)
  const parent = valueAt(root, tokens.slice(0, -1), refuse)
  const last = tokens[tokens.length - 1]
  if (Array.isArray(parent)) parent.splice(arrayIndex(last, parent.length - 1)!, 1)
  else delete (parent as JsonObject)[last]
}

/** An array index token (RFC 6901 §4: digits, no leading zero) no greater than `max`. */
function arrayIndex(token: string, max: number): number | undefined {
  if (!/^(0|[1-9][0-9]*)$/.test(token)) return undefined
  const index = Number(token)
  return index <= max ? index : undefined
}

/** A deep copy whose keys are all own data properties, `__proto__` included (lib/json/values.ts, defineValue). */
function cloneJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(cloneJson)
  if (!isObject(value)) return value
  const copy: JsonObject = {}
  for (const key of Object.keys(value)) defineValue(copy, key, cloneJson(value[key]))
  return copy
}

/** RFC 6902 §4.6: same type; numbers by value, objects by their members whatever their order, arrays item by item. */
export function jsonEqual(left: unknown, right: unknown): boolean {
  if (Array.isArray(left)) return Array.isArray(right) && left.length === right.length && left.every((item, index) => jsonEqual(item, right[index]))
  if (isObject(left)) {
    if (!isObject(right)) return false
    const keys = Object.keys(left)
    return keys.length === Object.keys(right).length && keys.every((key) => Object.hasOwn(right, key) && jsonEqual(left[key], right[key]))
  }
  return left === right
}

function shortJson(value: unknown): string {
  const text = JSON.stringify(value)
  return text.length > 80 ? `${text.slice(0, 77)}...` : text
}

function depthOf(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0
  let deepest = 0
  for (const item of Object.values(value)) deepest = Math.max(deepest, depthOf(item))
  return deepest + 1
}

function countValues(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 1
  let count = 1
  for (const item of Object.values(value)) count += countValues(item)
  return count
}
