import type { Context } from '../http/context.ts'
import { preconditionsOf, urlOf } from '../http/context.ts'
import type { Params } from '../http/router.ts'
import type { Doc, NodePath } from '../store/store.ts'
import { HttpError } from '../http-error.ts'
import { NothingStored } from '../data/documents.ts'
import { uniqueFieldProblem, userFamily } from '../data/declarations.ts'
import { isStoreError } from '../store/errors.ts'
import { readJsonBody } from '../http/body.ts'
import type { JsonObject } from '../json/values.ts'
import { sendJson, sendNoContent } from '../http/respond.ts'
import { readNode, refuseUnreachableChild } from './generic.ts'
import { collectionPath, memberPath, type DeclaredResource } from './declared.ts'
import { sendStoredDocument } from './collection.ts'
import { readPatch } from './patch.ts'

/**
 * Users (docs/http-api.md, "Users and playlists"): `{ "user_id": …, …fields }` at
 * `/user/:user_id`. The service assigns `user_id`; a `username`, when
 * present, is a non-empty string unique among users. A user owns everything
 * stored below it, its playlists included.
 */
export const users: DeclaredResource = {
  collection: userFamily.collection,
  idField: userFamily.idField,
  missing: (params: Params) => noUser(params.user_id),
  create: createUser,
  read: readUser,
  replace: replaceUser,
  patch: patchUser,
  remove: deleteUser,
}

/** Usernames are unique among users: the store keeps it as it writes (docs/http-api.md, "Users and playlists"). */
function usernames(context: Context) {
  return { among: collectionPath(users, context.params), field: 'username' }
}

async function createUser(context: Context): Promise<void> {
  refuseUnreachableChild(context)
  const body = await readJsonBody(context.req, context.settings.bodyLimits)
  refuseIdChange(body, undefined)
  checkUsername(body)
  const created = await context.documents
    .create(collectionPath(users, context.params), (id) => ({ user_id: id, ...body }), { unique: usernames(context) })
    .catch((error: unknown) => usernameTaken(error, body))
  sendJson(context, 201, created.doc, { Location: urlOf(context, [...collectionPath(users, context.params), created.id]), ETag: created.etag })
}

async function readUser(context: Context): Promise<void> {
  // `?_children` names the user's children (its `playlist`), as on any node.
  const path = userPath(context)
  if (context.query.has('_children')) return readNode(context, path)
  const stored = await context.documents.readText(path)
  if (!stored) throw noUser(context.params.user_id)
  await sendStoredDocument(context, path, stored)
}

async function replaceUser(context: Context): Promise<void> {
  const userId = context.params.user_id
  const body = await readJsonBody(context.req, context.settings.bodyLimits)
  refuseIdChange(body, userId)
  checkUsername(body)
  const outcome = await context.documents
    .write(userPath(context), (current) => {
      if (!current) throw noUser(userId)
      return { ...body, user_id: userId }
    }, { preconditions: preconditionsOf(context), unique: usernames(context) })
    .catch((error: unknown) => usernameTaken(error, body))
  sendJson(context, 200, outcome.doc, { ETag: outcome.etag })
}

async function patchUser(context: Context): Promise<void> {
  const userId = context.params.user_id
  const patch = await readPatch(context)
  if (patch.merge) refuseIdChange(patch.merge, userId)
  let merged: Doc = {}
  const outcome = await context.documents
    .write(userPath(context), (current) => {
      if (!current) throw noUser(userId)
      merged = patch.apply(current.doc)
      refuseIdChange(merged, userId)
      checkUsername(merged)
      return { ...merged, user_id: userId }
    }, { preconditions: preconditionsOf(context), unique: usernames(context), patch: patch.merge })
    .catch((error: unknown) => usernameTaken(error, merged))
  sendJson(context, 200, outcome.doc, { ETag: outcome.etag })
}

async function deleteUser(context: Context): Promise<void> {
  const userId = context.params.user_id
  const { doc } = await context.documents.remove(userPath(context), preconditionsOf(context)).catch((error) => {
    throw error instanceof NothingStored ? noUser(userId) : error
  })
  if (doc) sendJson(context, 200, doc)
  else sendNoContent(context)
}

function userPath(context: Context): NodePath {
  return memberPath(users, context.params)
}

function noUser(userId: string): HttpError {
  return new HttpError(404, `There is no user ${JSON.stringify(userId)}.`)
}

/** `user_id` is the service's: a body may repeat it, never set or change it. */
function refuseIdChange(body: JsonObject, userId: string | undefined): void {
  if (!Object.hasOwn(body, 'user_id')) return
  if (userId === undefined) throw new HttpError(400, 'user_id is assigned by the service; leave it out of the body.')
  if (body.user_id !== userId) {
    throw new HttpError(400, `user_id cannot be changed (this user is ${JSON.stringify(userId)}).`)
  }
}

/** A username, when there is one, must be a non-empty string (whether it is free, the store says as it writes). */
function checkUsername(doc: JsonObject): void {
  if (!Object.hasOwn(doc, 'username')) return
  const invalid = uniqueFieldProblem('username', doc.username)
  if (invalid) throw new HttpError(400, `${invalid}.`)
}

/** The store's refusal of a username another user holds, as the client hears it. */
function usernameTaken(error: unknown, doc: JsonObject): never {
  if (!isStoreError(error, 'taken')) throw error
  throw new HttpError(409, `The username ${JSON.stringify(doc.username)} is taken by user ${JSON.stringify(error.reason)}.`)
}
