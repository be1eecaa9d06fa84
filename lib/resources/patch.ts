import type { Context } from '../http/context.ts'
import type { Doc } from '../store/store.ts'
import { HttpError } from '../http-error.ts'
import { ACCEPT_PATCH } from '../http/body.ts'
import { pacer } from '../data/pace.ts'
import { applyJsonPatch, checkedPatchArray, JsonPatchError, parseOperation, type PatchOperation } from '../json/patch.ts'
import { isObject, jsonKindOf, mergePatch, type JsonObject } from '../json/values.ts'

/**
 * A PATCH body, read and checked (docs/http-api.md, "PATCH"): a merge patch
 * (RFC 7396) or a JSON Patch (RFC 6902). Every PATCH-able URL applies it inside
 * its write's compare-and-set, to the document as read there, so a patch is
 * atomic and applied again when the document changed meanwhile.
 */
export interface Patch {
  /**
   * The merge patch sent: checked before the write, and what the change feed
   * reports. None for a JSON Patch, whose result is checked as a PUT body is.
   */
  merge?: JsonObject
  /**
   * The document the patch makes of the stored one; a JSON Patch's failure is a 400, a failed
   * `test` a 409, a document it would make too large a 413. Its work is paced (lib/data/pace.ts).
   */
  apply(current: Doc): Promise<Doc>
}

export async function readPatch(context: Context): Promise<Patch> {
  const body = await context.body.patch()
  if (body.type === 'merge') return { merge: body.patch, apply: async (current) => mergePatch(current, body.patch) as Doc }
  // One budget for the request's work on the event loop, as a listing's (docs/http-api.md, "PATCH"): checking thousands of operations is paced too.
  const pace = pacer()
  const operations: PatchOperation[] = []
  for (const [index, operation] of answerPatchError(() => checkedPatchArray(body.operations)).entries()) {
    operations.push(answerPatchError(() => parseOperation(operation, index)))
    const turn = pace()
    if (turn) await turn
  }
  // A patched document is bounded as a body is, so a patch of copies cannot make one many times larger than a client may send.
  const limits = { maxDepth: context.settings.bodyLimits.maxDepth, maxSize: context.settings.bodyLimits.maxBody }
  return {
    async apply(current) {
      const result = await answerPatchError(() => applyJsonPatch(current, operations, limits, pace))
      if (!isObject(result)) throw new HttpError(400, `The JSON Patch would leave ${jsonKindOf(result)}; a document is a JSON object. Nothing was changed.`)
      return result
    },
  }
}

/** An OPTIONS answer's headers: `Allow`, and `Accept-Patch` where PATCH is allowed (RFC 5789 §3.1). */
export function optionsHeaders(allowed: readonly string[]): Record<string, string> {
  return { Allow: allowed.join(', '), ...(allowed.includes('PATCH') ? { 'Accept-Patch': ACCEPT_PATCH } : {}) }
}

/**
 * RFC 5789 §2.2: a malformed or unapplicable patch is a 400, a conflict with the document's state
 * (a failed `test`) a 409; a document it would make larger than a body may be is a 413 (RFC 9110 §15.5.14).
 */
function answerPatchError<T>(run: () => T): T {
  const refusal = (error: unknown): never => {
    if (!(error instanceof JsonPatchError)) throw error
    if (error.kind === 'test-failed') throw new HttpError(409, `The JSON Patch's test failed, so nothing was changed. ${error.message}`)
    if (error.kind === 'too-large') throw new HttpError(413, `The JSON Patch would make the document too large (--max-body), so nothing was changed. ${error.message}`)
    throw new HttpError(400, `The JSON Patch cannot be applied, so nothing was changed. ${error.message}`)
  }
  try {
    const result = run()
    return (result instanceof Promise ? result.catch(refusal) : result) as T
  } catch (error) {
    return refusal(error)
  }
}
