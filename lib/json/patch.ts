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
  /**
   * Largest size (sizeOf) a patched document may reach, unless it was larger
   * before the patch (docs/http-api.md, "PATCH"): what each operation adds is
   * counted before it is added, so a patch of copies is refused before it
   * builds a document many times what a client may send.
   */
  maxSize: number
}

/**
 * Spends the work an operation did on the event loop (lib/data/pace.ts, `Pace`):
 * a promise to await when the slice is used up and other requests get their turn.
 */
export type PatchPace = (cost: number) => Promise<void> | undefined

/**
 * Why a patch is not applied: `invalid` is the patch's fault (400); `test-failed` is a `test` that
 * did not hold (409); `too-large` would make the document larger than the limit (413).
 */
export class JsonPatchError extends Error {
  readonly kind: 'invalid' | 'test-failed' | 'too-large'
  /** The operation's index in the patch (from 0), and its `op` when it has one. */
  readonly index: number
  readonly op: string | undefined

  constructor(kind: 'invalid' | 'test-failed' | 'too-large', index: number, op: string | undefined, reason: string) {
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
  return checkedPatchArray(patch).map(parseOperation)
}

/** The patch as the array of operations it must be. */
export function checkedPatchArray(patch: unknown): unknown[] {
  if (!Array.isArray(patch)) throw new JsonPatchError('invalid', 0, undefined, `a JSON Patch is an array of operations, not ${jsonKindOf(patch)}.`)
  return patch
}

/** Checks operation `index` of a patch (see parseJsonPatch). */
export function parseOperation(operation: unknown, index: number): PatchOperation {
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
 *
 * The work is spent on `pace` as it goes (an array shifted costs its length, a
 * value copied or measured its size), so a patch of many operations on a big
 * document never holds the event loop; and the document's size is kept
 * current, each value an operation adds counted before it is in place.
 */
export async function applyJsonPatch(document: unknown, operations: readonly PatchOperation[], limits: PatchLimits, pace: PatchPace = () => undefined): Promise<unknown> {
  const original = await copyOf(document, Infinity, Infinity, pace)
  let root = original!.value
  let size = original!.size
  const maxSize = Math.max(limits.maxSize, size)
  // Copies and added values are counted twice over too, so that copying and removing again and again is bounded work.
  let added = 0
  const maxAdded = 4 * maxSize
  for (const [index, operation] of operations.entries()) {
    const refuse = (reason: string) => new JsonPatchError('invalid', index, operation.op, reason)
    const tooLarge = (inAll: boolean) =>
      new JsonPatchError('too-large', index, operation.op, inAll
        ? `the patch would add more than ${maxAdded} characters of JSON in all (four times the limit of ${maxSize}).`
        : `the document would become larger than ${maxSize} characters of JSON, the limit.`)
    const { path } = operation
    let work = path.length + (operation.from?.length ?? 0)
    /** Puts a value (from the patch, or a copy) at `path`: counted, then copied within the room left, then placed. */
    const insert = async (value: unknown, replacing: boolean) => {
      const slot = slotAt(root, path, replacing, refuse)
      const before = slot.existing ? await sizeOf(slot.current, pace) : 0
      const sizeRoom = maxSize - (size - before + (slot.existing ? 0 : slot.overhead))
      const copy = await copyOf(value, Math.min(sizeRoom, maxAdded - added), limits.maxDepth - path.length, pace)
      if (copy === undefined) throw tooLarge(maxAdded - added < sizeRoom)
      if (copy.deeper) throw refuse(`the document would nest deeper than ${limits.maxDepth} levels.`)
      size += copy.size - before + (slot.existing ? 0 : slot.overhead)
      added += copy.size
      root = place(root, slot, copy.value)
      work += slot.shifted
    }
    switch (operation.op) {
      case 'add':
        await insert(operation.value, false)
        break
      case 'remove': {
        if (path.length === 0) throw refuse('the whole document cannot be removed.')
        valueAt(root, path, refuse)
        const slot = slotAt(root, path, true, refuse)
        size -= (await sizeOf(slot.current, pace)) + slot.overhead
        removeSlot(slot)
        work += slot.shifted
        break
      }
      case 'replace':
        valueAt(root, path, refuse)
        await insert(operation.value, true)
        break
      case 'move': {
        const from = operation.from!
        const value = valueAt(root, from, refuse, 'from')
        if (from.length < path.length && from.every((token, at) => token === path[at])) {
          throw refuse(`"from" ${JSON.stringify(formatPointer(from))} cannot move into its own child ${JSON.stringify(formatPointer(path))} (RFC 6902 §4.4).`)
        }
        if (from.length === path.length && from.every((token, at) => token === path[at])) break
        // Moved deeper, it may pass the depth limit; moved as deep or less, it nests no deeper than it did.
        if (path.length > from.length && (await depthOver(value, limits.maxDepth - path.length, pace))) throw refuse(`the document would nest deeper than ${limits.maxDepth} levels.`)
        const source = slotAt(root, from, true, refuse)
        size -= source.overhead
        removeSlot(source)
        work += source.shifted
        if (path.length === 0) {
          root = value
          size = await sizeOf(value, pace)
          break
        }
        // The value keeps its size wherever it goes: only what it replaces, and where it stands, change the total.
        const target = slotAt(root, path, false, refuse)
        size += target.existing ? -(await sizeOf(target.current, pace)) : target.overhead
        root = place(root, target, value)
        work += target.shifted
        break
      }
      case 'copy': {
        await insert(valueAt(root, operation.from!, refuse, 'from'), false)
        break
      }
      case 'test': {
        const value = valueAt(root, path, refuse)
        if (!jsonEqual(value, operation.value)) {
          throw new JsonPatchError('test-failed', index, 'test', `the value at ${JSON.stringify(formatPointer(path))} is not ${shortJson(operation.value)}.`)
        }
        // Compared member by member: at most the size of the value the patch sent.
        work += Math.min(size, await sizeOf(operation.value, pace))
      }
    }
    const turn = pace(work)
    if (turn) await turn
  }
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
 * Where a pointer puts a value: the whole document, an array position or an
 * object member; whether something is there (`current`) that the value
 * replaces, what the place costs beyond the value (a member's key, its
 * separator; see sizeOf), and how many items an insertion or removal shifts.
 */
interface Slot {
  parent?: unknown[] | JsonObject
  key: string
  index: number
  existing: boolean
  current?: unknown
  overhead: number
  shifted: number
}

/**
 * RFC 6902 §4.1 (and §4.3, `replacing` an existing value): the parent must
 * exist; an array takes an index up to its length, or `-` for its end, and
 * shifts what follows; an object member keeps its place when it is replaced.
 */
function slotAt(root: unknown, tokens: readonly string[], replacing: boolean, refuse: (reason: string) => Error): Slot {
  if (tokens.length === 0) return { key: '', index: -1, existing: true, current: root, overhead: 0, shifted: 0 }
  const parent = valueAt(root, tokens.slice(0, -1), refuse)
  const last = tokens[tokens.length - 1]
  if (Array.isArray(parent)) {
    const index = last === '-' && !replacing ? parent.length : arrayIndex(last, replacing ? parent.length - 1 : parent.length)
    if (index === undefined) throw refuse(`${JSON.stringify(last)} is not an index of the array at ${JSON.stringify(formatPointer(tokens.slice(0, -1)))} (0 to ${parent.length}, or "-").`)
    return { parent, key: last, index, existing: replacing, current: replacing ? parent[index] : undefined, overhead: 1, shifted: parent.length - index }
  }
  if (isObject(parent)) {
    const existing = Object.hasOwn(parent, last)
    return { parent, key: last, index: -1, existing, current: existing ? parent[last] : undefined, overhead: last.length + 4, shifted: 0 }
  }
  throw refuse(`${JSON.stringify(formatPointer(tokens.slice(0, -1)))} is ${jsonKindOf(parent)}, which has no members to add to.`)
}

/** Puts `value` in its slot (replacing what is there, if anything); answers the document's new root. */
function place(root: unknown, slot: Slot, value: unknown): unknown {
  if (!slot.parent) return value
  if (Array.isArray(slot.parent)) slot.parent.splice(slot.index, slot.existing ? 1 : 0, value)
  else defineValue(slot.parent, slot.key, value)
  return root
}

function removeSlot(slot: Slot): void {
  if (Array.isArray(slot.parent)) slot.parent.splice(slot.index, 1)
  else delete (slot.parent as JsonObject)[slot.key]
}

/** An array index token (RFC 6901 §4: digits, no leading zero) no greater than `max`. */
function arrayIndex(token: string, max: number): number | undefined {
  if (!/^(0|[1-9][0-9]*)$/.test(token)) return undefined
  const index = Number(token)
  return index <= max ? index : undefined
}

/**
 * About the size of a value's compact JSON text, counted without making it:
 * a string's characters and its quotes, a number's digits, and for an array
 * or object its brackets and each member, with its key (quoted, and a colon)
 * and one separator. Escapes are not counted: it is at most the text's length.
 */
function scalarSize(value: unknown): number {
  if (typeof value === 'string') return value.length + 2
  if (typeof value === 'number') return String(value).length
  return value === true ? 4 : value === false ? 5 : 4
}

/**
 * A deep copy of a JSON value whose keys are all own data properties,
 * `__proto__` included (lib/json/values.ts, defineValue), and its size
 * (scalarSize): undefined as soon as the size passes `room`, before more of it
 * is made; `deeper` when it nests more than `depth` levels. The work is spent
 * on `pace` one array or object at a time.
 */
async function copyOf(value: unknown, room: number, depth: number, pace: PatchPace): Promise<{ value: unknown; size: number; deeper?: boolean } | undefined> {
  if (typeof value !== 'object' || value === null) {
    const size = scalarSize(value)
    return size > room ? undefined : { value, size }
  }
  const top: unknown[] | JsonObject = Array.isArray(value) ? [] : {}
  const pending: { from: unknown[] | JsonObject; to: unknown[] | JsonObject; depth: number }[] = [{ from: value as JsonObject, to: top, depth: 1 }]
  let size = 0
  while (pending.length > 0) {
    const { from, to, depth: at } = pending.pop()!
    if (at > depth) return { value: top, size, deeper: true }
    const made = (item: unknown): unknown => {
      if (typeof item !== 'object' || item === null) {
        size += scalarSize(item) + 1
        return item
      }
      const child: unknown[] | JsonObject = Array.isArray(item) ? [] : {}
      pending.push({ from: item as JsonObject, to: child, depth: at + 1 })
      size += 1
      return child
    }
    size += 2
    let members = 0
    if (Array.isArray(from)) {
      for (const item of from) (to as unknown[]).push(made(item))
      members = from.length
    } else {
      for (const key of Object.keys(from)) {
        size += key.length + 3
        defineValue(to as JsonObject, key, made(from[key]))
        members++
      }
    }
    if (size > room) return undefined
    const turn = pace(members * 8)
    if (turn) await turn
  }
  return size > room ? undefined : { value: top, size }
}

/** The size of a value (see copyOf), measured without copying it. */
async function sizeOf(value: unknown, pace: PatchPace): Promise<number> {
  if (typeof value !== 'object' || value === null) return scalarSize(value)
  const pending: unknown[] = [value]
  let size = 0
  while (pending.length > 0) {
    const container = pending.pop() as unknown[] | JsonObject
    const items = Array.isArray(container) ? container : Object.values(container)
    size += 2
    if (!Array.isArray(container)) for (const key of Object.keys(container)) size += key.length + 3
    for (const item of items) {
      if (typeof item === 'object' && item !== null) {
        pending.push(item)
        size += 1
      } else size += scalarSize(item) + 1
    }
    const turn = pace(items.length * 8)
    if (turn) await turn
  }
  return size
}

/** Whether a value nests more than `levels` levels deep, found without copying it. */
async function depthOver(value: unknown, levels: number, pace: PatchPace): Promise<boolean> {
  const pending: { value: unknown; depth: number }[] = [{ value, depth: 0 }]
  while (pending.length > 0) {
    const next = pending.pop()!
    if (typeof next.value !== 'object' || next.value === null) continue
    if (next.depth + 1 > levels) return true
    const items = Object.values(next.value)
    for (const item of items) pending.push({ value: item, depth: next.depth + 1 })
    const turn = pace(items.length * 8)
    if (turn) await turn
  }
  return false
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
