import type { Answer, Context } from '../../http/context.ts'
import { preconditionsOf, urlOf } from '../../http/context.ts'
import type { Doc, NodePath } from '../../store/store.ts'
import type { RequireOwners } from '../generic.ts'
import { HttpError } from '../../http-error.ts'
import { NothingStored } from '../../data/documents.ts'
import { defineValue, type JsonObject } from '../../json/values.ts'
import { jsonAnswer } from '../../http/respond.ts'
import { ID_LENGTH } from '../../store/new-id.ts'
import { checkNewChildPath } from '../../path.ts'
import { isStoreError } from '../../store/errors.ts'
import { EVERY_ORPHAN, removeWithDependents } from '../../listing/relations.ts'
import { withoutOwnId } from './singular.ts'
import { readPatch } from '../patch.ts'

/*
 * A collection and its members as json-server 0.17 answers them
 * (docs/json-server.md, "The json-server mode"): integer ids, a chosen id on
 * POST, PUT only of what exists, PATCH as a shallow update, DELETE with the
 * documents that point at the deleted one.
 */

/** Thrown inside a create-only write that finds its id taken. */
class IdTaken extends Error {}

/**
 * POST on a collection: the body as the new member, under the id it names
 * (json-server takes it; a taken one is a 409), else the next integer where the
 * collection's ids are integers, else a new restdir id. `extra` is added to the
 * body (a nested route's foreign key).
 */
export async function createMember(context: Context, collection: NodePath, requireOwners: RequireOwners, body: JsonObject): Promise<Answer> {
  const owner = await requireOwners(context, collection)
  const { idField } = context.settings
  const chosen = body[idField]
  if (chosen !== undefined) {
    if ((typeof chosen !== 'string' && typeof chosen !== 'number') || String(chosen) === '' || (typeof chosen === 'number' && !Number.isSafeInteger(chosen))) {
      throw new HttpError(400, `The body's ${JSON.stringify(idField)} (${JSON.stringify(chosen)}) must be a non-empty string or a whole number; leave it out and the server gives one.`)
    }
    checkNewChildPath(context.target, String(chosen).length, context.settings.pathLimits)
    const created = await createAt(context, [...collection, String(chosen)], withId(body, idField, chosen), owner)
    if (!created) throw new HttpError(409, `${urlOf(context, [...collection, String(chosen)])} exists already; PUT or PATCH it, or POST without an id.`)
    return createdAnswer(context, created)
  }
  for (;;) {
    const next = await context.documents.holdIntegerId(collection, idField)
    if (next === undefined) break
    const created = await createAt(context, [...collection, String(next.id)], withId(body, idField, next.id), owner).finally(next.release)
    // Taken meanwhile by another instance: the next one.
    if (created) return createdAnswer(context, created)
  }
  checkNewChildPath(context.target, ID_LENGTH, context.settings.pathLimits)
  const created = await context.documents.create(collection, (id) => withId(body, idField, id), { owner })
  return createdAnswer(context, { path: [...collection, created.id], doc: created.doc, etag: created.etag })
}

/** `body` with its id field set to `id`: last, where json-server's insert puts it, or where the body has it. */
function withId(body: JsonObject, idField: string, id: string | number): Doc {
  const doc: Doc = { ...body }
  defineValue(doc, idField, id)
  return doc
}

interface Created {
  path: NodePath
  doc: Doc
  etag: string
}

/** Writes `doc` at `path` only if nothing is there; undefined when something is. */
async function createAt(context: Context, path: NodePath, doc: Doc, owner: NodePath | undefined): Promise<Created | undefined> {
  try {
    const outcome = await context.documents.write(path, (current) => {
      if (current) throw new IdTaken()
      return doc
    }, { owner })
    return { path, doc: outcome.doc, etag: outcome.etag }
  } catch (error) {
    if (error instanceof IdTaken || isStoreError(error, 'bad-document')) return undefined
    throw error
  }
}

function createdAnswer(context: Context, created: Created): Answer {
  // json-server 0.17 exposes `Location` on every answer to a POST, with or without an `Origin`.
  return jsonAnswer(context, 201, created.doc, { Location: urlOf(context, created.path), ETag: created.etag, 'Access-Control-Expose-Headers': 'Location' })
}

/**
 * PUT of a member: replaces what exists, keeping its id as stored (json-server
 * keeps the number 1 of `/posts/1`, and ignores an `id` in the body); a member
 * that does not exist is a 404.
 */
export async function replaceMember(context: Context): Promise<Answer> {
  const body = await context.body.json()
  const outcome = await context.documents.write(context.path, (current) => {
    if (!current) throw new NothingStored(context.path)
    // json-server 0.17 keeps the stored id whatever the body says ("id values are not mutable").
    const { idField } = context.settings
    // The body's fields in its order, the stored id where the body has one, else last (lodash-id's replaceById).
    const id = current.doc[idField] ?? lastOf(context.path)
    const doc: Doc = {}
    for (const key of Object.keys(body)) defineValue(doc, key, key === idField ? id : body[key])
    if (!Object.hasOwn(doc, idField)) defineValue(doc, idField, id)
    return doc
  }, { preconditions: preconditionsOf(context) })
  return jsonAnswer(context, 200, outcome.doc, { ETag: outcome.etag })
}

/**
 * PATCH of a member or a singular resource: json-server's shallow update (each
 * top-level field of the body replaces the stored one), or with
 * `Content-Type: application/merge-patch+json` RFC 7396's merge, or with
 * `application/json-patch+json` a JSON Patch (RFC 6902).
 */
export async function updateDocument(context: Context, keepsId: boolean): Promise<Answer> {
  const mergeType = /^application\/merge-patch\+json\b/i.test(context.requestHeaders['content-type'] ?? '')
  const patch = await readPatch(context)
  const outcome = await context.documents.write(context.path, async (current) => {
    if (!current) throw new NothingStored(context.path)
    const updated = patch.merge && !mergeType ? { ...current.doc, ...patch.merge } : await patch.apply(current.doc)
    if (!keepsId) return updated
    const { idField } = context.settings
    const doc: Doc = { ...updated }
    defineValue(doc, idField, current.doc[idField] ?? lastOf(context.path))
    return doc
  }, { preconditions: preconditionsOf(context), patch: mergeType ? patch.merge : undefined })
  return jsonAnswer(context, 200, keepsId ? outcome.doc : withoutOwnId(outcome.doc, context.path[0]), { ETag: outcome.etag })
}

/**
 * DELETE of a member: it, what is below it, and every document of another
 * top-level collection whose foreign key names it (`postId` 1 for `/posts/1`),
 * as json-server 0.17 removes them, in one batch; answered `{}`, as 0.17 answers.
 */
export async function removeMember(context: Context): Promise<Answer> {
  // The member and every orphan go in one step of the store (one write of a db.json), all or none.
  await removeWithDependents(context.documents, context.path, EVERY_ORPHAN, preconditionsOf(context), context.settings)
  return jsonAnswer(context, 200, {})
}

function lastOf(path: NodePath): string {
  return path[path.length - 1]
}
