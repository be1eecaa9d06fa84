import type { Context } from '../http/context.ts'
import type { Doc } from '../store/store.ts'
import { HttpError } from '../http-error.ts'
import { ACCEPT_PATCH, readPatchBody } from '../http/body.ts'
import { applyJsonPatch, JsonPatchError, parseJsonPatch } from '../json/patch.ts'
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
  /** The document the patch makes of the stored one; a JSON Patch's failure is a 400, a failed `test` a 409. */
  apply(current: Doc): Doc
}

export async function readPatch(context: Context): Promise<Patch> {
  const body = await readPatchBody(context.req, context.settings.bodyLimits)
  if (body.type === 'merge') return { merge: body.patch, apply: (current) => mergePatch(current, body.patch) as Doc }
  const operations = answerPatchError(() => parseJsonPatch(body.operations))
  // Copies are bounded by the body limit, so a patch cannot make a document many times larger than one a client may send.
  const limits = { maxDepth: context.settings.bodyLimits.maxDepth, maxCopiedValues: context.settings.bodyLimits.maxBody }
  return {
    apply(current) {
      const result = answerPatchError(() => applyJsonPatch(current, operations, limits))
      if (!isObject(result)) throw new HttpError(400, `The JSON Patch would leave ${jsonKindOf(result)}; a document is a JSON object. Nothing was changed.`)
      return result
    },
  }
}

/** An OPTIONS answer's headers: `Allow`, and `Accept-Patch` where PATCH is allowed (RFC 5789 §3.1). */
export function optionsHeaders(allowed: readonly string[]): Record<string, string> {
  return { Allow: allowed.join(', '), ...(allowed.includes('PATCH') ? { 'Accept-Patch': ACCEPT_PATCH } : {}) }
}

/** RFC 5789 §2.2: a malformed or unapplicable patch is a 400, a conflict with the document's state (a failed `test`) a 409. */
function answerPatchError<T>(run: () => T): T {
  try {
    return run()
  } catch (error) {
    if (!(error instanceof JsonPatchError)) throw error
    if (error.kind === 'test-failed') throw new HttpError(409, `The JSON Patch's test failed, so nothing was changed. ${error.message}`)
    throw new HttpError(400, `The JSON Patch cannot be applied, so nothing was changed. ${error.message}`)
  }
}
