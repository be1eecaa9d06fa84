import type { Answer, Answering, Context } from '../http/context.ts'
import { preconditionsOf, urlOf } from '../http/context.ts'
import type { Params } from '../http/router.ts'
import type { Doc } from '../store/store.ts'
import { HttpError } from '../http-error.ts'
import { NothingStored } from '../data/documents.ts'
import { arrayFieldProblem, arrayItemNote, lineageOf, uniqueFieldProblem, type Family } from '../data/declarations.ts'
import { isStoreError } from '../store/errors.ts'
import { defineValue, type JsonObject } from '../json/values.ts'
import { readPatch } from './patch.ts'
import { jsonAnswer, noContent } from '../http/respond.ts'
import { readNode, readStored, refuseUnreachableChild } from './generic.ts'
import { collectionPath, memberPath, requireOwnersOf, type DeclaredResource } from './declared.ts'

/**
 * The resources of declared families (docs/http-api.md, "Users and playlists" and "Declaring
 * resources"): `{ "<id>": …, "<owners' ids>": …, …fields }` at `/<collection>/:<id>`, below
 * its owner's member when it has one. The service assigns the id and carries each owner's; a
 * unique field, when present, is a non-empty string no other member of the collection holds;
 * an array field is always an array, `[]` when left out. A member owns everything stored below it.
 * Returns one resource a family, in the order of `families`, each parent before its children.
 */
export function familyResources(families: readonly Family[]): DeclaredResource[] {
  const made = new Map<Family, DeclaredResource>()
  for (const family of families) made.set(family, familyResource(family, family.parent && made.get(family.parent)))
  return [...made.values()]
}

function familyResource(family: Family, parent: DeclaredResource | undefined): DeclaredResource {
  const owners = family.parent ? lineageOf(family.parent) : []
  const { idField } = family
  const resource: DeclaredResource = {
    collection: family.collection,
    idField,
    parent,
    missing: (params) => noMember(params),
    create: createMember,
    read: readMember,
    replace: replaceMember,
    patch: patchMember,
    remove: removeMember,
  }

  /** "There is no user …" at the top; "User … has no playlist …" below an owner. */
  function noMember(params: Params): HttpError {
    const owner = owners.at(-1)
    if (!owner) return new HttpError(404, `There is no ${family.collection} ${JSON.stringify(params[idField])}.`)
    const ownerName = owner.collection.charAt(0).toUpperCase() + owner.collection.slice(1)
    return new HttpError(404, `${ownerName} ${JSON.stringify(params[owner.idField])} has no ${family.collection} ${JSON.stringify(params[idField])}.`)
  }

  /** The owners' ids, outermost first, that every member carries: a playlist's `user_id`. */
  function ownerIds(params: Params): Doc {
    const ids: Doc = {}
    for (const owner of owners) ids[owner.idField] = params[owner.idField]
    return ids
  }

  /** The unique field (a family has one at most) is kept unique by the store as it writes. */
  function uniqueness(context: Context) {
    const field = family.unique[0]
    return field === undefined ? undefined : { among: collectionPath(resource, context.params), field }
  }

  async function createMember(context: Context): Promise<Answer> {
    refuseUnreachableChild(context)
    const body = await context.body.json()
    refuseIdChanges(body, context.params, undefined)
    checkUniqueFields(body)
    const arrays = arraysOf(body)
    const parentPath = collectionPath(resource, context.params)
    const owner = await requireOwnersOf(context, resource)
    const ids = ownerIds(context.params)
    const created = await context.documents
      .create(parentPath, (id) => ({ [idField]: id, ...ids, ...body, ...arrays }), { owner, unique: uniqueness(context) })
      .catch((error: unknown) => uniqueTaken(error, body))
    return jsonAnswer(context, 201, created.doc, { Location: urlOf(context, [...parentPath, created.id]), ETag: created.etag })
  }

  /** A hot member the store can tell at once (Documents.readTextNow) is answered at once, as readNode answers a document. */
  function readMember(context: Context): Answering {
    // `?_children` names the member's children (a user's `playlist`), as on any node.
    const path = memberPath(resource, context.params)
    if (context.query.has('_children')) return readNode(context, path)
    return readStored(context, path, missingMember)
  }

  function missingMember(context: Context): Promise<Answer> {
    return Promise.reject(noMember(context.params))
  }

  async function replaceMember(context: Context): Promise<Answer> {
    const { params } = context
    const body = await context.body.json()
    refuseIdChanges(body, params, params[idField])
    checkUniqueFields(body)
    const arrays = arraysOf(body)
    const outcome = await context.documents
      .write(memberPath(resource, params), (current) => {
        if (!current) throw noMember(params)
        return withIds({ ...body, ...arrays }, params)
      }, { preconditions: preconditionsOf(context), unique: uniqueness(context) })
      .catch((error: unknown) => uniqueTaken(error, body))
    return jsonAnswer(context, 200, outcome.doc, { ETag: outcome.etag })
  }

  async function patchMember(context: Context): Promise<Answer> {
    const { params } = context
    // A merge patch or a JSON Patch (docs/http-api.md, "PATCH"); the document it makes is held to the rules a PUT body is.
    const patch = await readPatch(context)
    if (patch.merge) {
      refuseIdChanges(patch.merge, params, params[idField])
      // `null` removes an array field (RFC 7396 §2), which then resets to []; any other non-array is refused before the read.
      for (const field of family.arrays) if (Object.hasOwn(patch.merge, field) && patch.merge[field] !== null) arraysOf({ [field]: patch.merge[field] })
    }
    let merged: Doc = {}
    const outcome = await context.documents
      .write(memberPath(resource, params), async (current) => {
        if (!current) throw noMember(params)
        merged = await patch.apply(current.doc)
        refuseIdChanges(merged, params, params[idField])
        checkUniqueFields(merged)
        return withIds({ ...merged, ...arraysOf(merged) }, params)
      }, { preconditions: preconditionsOf(context), unique: uniqueness(context), patch: patch.merge })
      .catch((error: unknown) => uniqueTaken(error, merged))
    return jsonAnswer(context, 200, outcome.doc, { ETag: outcome.etag })
  }

  async function removeMember(context: Context): Promise<Answer> {
    const { doc } = await context.documents.remove(memberPath(resource, context.params), preconditionsOf(context)).catch((error) => {
      throw error instanceof NothingStored ? noMember(context.params) : error
    })
    return doc ? jsonAnswer(context, 200, doc) : noContent()
  }

  /**
   * A member's document with the ids the service keeps: a top-level member's id goes last, a
   * child's ids first (the seed's users and playlists have always been written so).
   */
  function withIds(doc: Doc, params: Params): Doc {
    if (owners.length === 0) return { ...doc, [idField]: params[idField] }
    return { [idField]: params[idField], ...ownerIds(params), ...doc }
  }

  /** The ids are the service's: a body may repeat them, never set or change them. */
  function refuseIdChanges(body: JsonObject, params: Params, memberId: string | undefined): void {
    for (const owner of owners) {
      const ownerId = params[owner.idField]
      if (Object.hasOwn(body, owner.idField) && body[owner.idField] !== ownerId) {
        throw new HttpError(400, `${owner.idField} cannot be changed: this ${family.collection} belongs to ${owner.collection} ${JSON.stringify(ownerId)}.`)
      }
    }
    if (!Object.hasOwn(body, idField)) return
    if (memberId === undefined) throw new HttpError(400, `${idField} is assigned by the service; leave it out of the body.`)
    if (body[idField] !== memberId) {
      throw new HttpError(400, `${idField} cannot be changed (this ${family.collection} is ${JSON.stringify(memberId)}).`)
    }
  }

  /** A unique field, when there is one, must be a non-empty string (whether it is free, the store says as it writes). */
  function checkUniqueFields(doc: JsonObject): void {
    for (const field of family.unique) {
      if (!Object.hasOwn(doc, field)) continue
      const invalid = uniqueFieldProblem(field, doc[field])
      if (invalid) throw new HttpError(400, `${invalid}.`)
    }
  }

  /** The store's refusal of a value another member holds, as the client hears it. */
  function uniqueTaken(error: unknown, doc: JsonObject): never {
    if (!isStoreError(error, 'taken')) throw error
    const field = family.unique[0]
    throw new HttpError(409, `The ${field} ${JSON.stringify(doc[field])} is taken by ${family.collection} ${JSON.stringify(error.reason)}.`)
  }

  /**
   * Each array field defaults to an empty list and must be an array: `null` is refused too.
   * (In a PATCH, `null` removes the key first, RFC 7396, so the list resets to [].)
   */
  function arraysOf(doc: JsonObject): Doc {
    const arrays: Doc = {}
    for (const field of family.arrays) {
      // Defined, never assigned: a field named `__proto__` is data like any other (SECURITY.md).
      if (!Object.hasOwn(doc, field)) {
        defineValue(arrays, field, [])
        continue
      }
      const invalid = arrayFieldProblem(field, doc[field])
      if (invalid) throw new HttpError(400, `${invalid}. ${arrayItemNote(field)}`)
      defineValue(arrays, field, doc[field])
    }
    return arrays
  }

  return resource
}

