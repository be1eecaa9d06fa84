import type { Answer, Context } from '../../http/context.ts'
import { preconditionsOf, urlOf } from '../../http/context.ts'
import type { Doc, StoredText } from '../../store/store.ts'
import { documentAnswer, jsonAnswer } from '../../http/respond.ts'

/*
 * Singular resources (docs/json-server.md, "The json-server mode"): a
 * document right below the root (`"profile": {…}` in a db.json) is one object,
 * not a member of a collection. It carries no `id` of its own, and POST, PUT
 * and PATCH replace or update it where they would make a child elsewhere.
 */

/**
 * A singular resource as json-server shows it: without the `id` that restdir's
 * import gives a top-level object (its own name), which json-server never had.
 */
export function withoutOwnId(doc: Doc, name: string): Doc {
  if (doc.id !== name) return doc
  const { id: _id, ...rest } = doc
  return rest as Doc
}

/** GET of a singular resource. */
export function singularAnswer(context: Context, stored: StoredText): Answer {
  const doc = JSON.parse(stored.json) as Doc
  const shown = withoutOwnId(doc, context.path[0])
  return documentAnswer(context, shown === doc ? stored : { json: JSON.stringify(shown), etag: stored.etag })
}

/**
 * POST (201) or PUT (200, or 201 when new) of a singular resource: the body
 * becomes the whole resource, with no `id` added.
 */
export async function replaceSingular(context: Context): Promise<Answer> {
  const body = await context.body.json()
  const outcome = await context.documents.write(context.path, () => body as Doc, {
    preconditions: preconditionsOf(context),
    replaces: true,
  })
  const status = context.method === 'POST' || outcome.created ? 201 : 200
  return jsonAnswer(context, status, outcome.doc, {
    ETag: outcome.etag,
    ...(status === 201 ? { Location: urlOf(context, context.path) } : {}),
    // json-server 0.17 exposes `Location` on a POST of a singular resource, with or without an `Origin`.
    ...(context.method === 'POST' ? { 'Access-Control-Expose-Headers': 'Location' } : {}),
  })
}
