import type { Context } from '../context.ts'
import { preconditionsOf, urlOf } from '../context.ts'
import type { Params } from '../http/router.ts'
import type { Doc, NodePath } from '../store/store.ts'
import { HttpError } from '../http/errors.ts'
import { NothingStored } from '../data/documents.ts'
import { readJsonBody } from '../http/body.ts'
import { mergePatch, type JsonObject } from '../data/json.ts'
import { sendJson, sendNoContent } from '../http/respond.ts'
import { readNode, refuseUnreachableChild } from './generic.ts'
import { collectionPath, memberPath, type DeclaredResource } from './declared.ts'
import { sendStoredDocument } from '../listing/listing.ts'

/**
 * Users (README, "Users and playlists"): `{ "user_id": …, …fields }` at
 * `/user/:user_id`. The service assigns `user_id`; a `username`, when
 * present, is a non-empty string unique among users. A user owns everything
 * stored below it, its playlists included.
 */
export const users: DeclaredResource = {
  collection: 'user',
  idField: 'user_id',
  missing: (params: Params) => noUser(params.user_id),
  create: createUser,
  read: readUser,
  replace: replaceUser,
  patch: patchUser,
  remove: deleteUser,
}

const USERNAMES = 'usernames'

async function createUser(context: Context): Promise<void> {
  refuseUnreachableChild(context)
  const body = await readJsonBody(context.req, context.settings.bodyLimits)
  refuseIdChange(body, undefined)
  const created = await context.documents.serialize(USERNAMES, async () => {
    await checkUsername(context, body, undefined)
    return context.documents.create(collectionPath(users, context.params), (id) => ({ user_id: id, ...body }))
  })
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
  const outcome = await context.documents.serialize(USERNAMES, () =>
    context.documents.write(userPath(context), async (current) => {
      if (!current) throw noUser(userId)
      await checkUsername(context, body, userId)
      return { ...body, user_id: userId }
    }, { preconditions: preconditionsOf(context) }),
  )
  sendJson(context, 200, outcome.doc, { ETag: outcome.etag })
}

async function patchUser(context: Context): Promise<void> {
  const userId = context.params.user_id
  const patch = await readJsonBody(context.req, context.settings.bodyLimits)
  refuseIdChange(patch, userId)
  const outcome = await context.documents.serialize(USERNAMES, () =>
    context.documents.write(userPath(context), async (current) => {
      if (!current) throw noUser(userId)
      const merged = mergePatch(current.doc, patch) as Doc
      await checkUsername(context, merged, userId)
      return { ...merged, user_id: userId }
    }, {
      preconditions: preconditionsOf(context),
      change: () => ({ type: 'patch', path: userPath(context), data: patch }),
    }),
  )
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

/** Runs under the usernames lock, so two requests can never both take one name. */
async function checkUsername(context: Context, doc: JsonObject, selfId: string | undefined): Promise<void> {
  if (!Object.hasOwn(doc, 'username')) return
  const username = doc.username
  const invalid = usernameProblem(username)
  if (invalid) throw new HttpError(400, `${invalid}.`)
  const members = (await context.documents.list(collectionPath(users, context.params))) ?? []
  const holder = members.find((user) => user.username === username && user.user_id !== selfId)
  if (holder) throw new HttpError(409, `The username ${JSON.stringify(username)} is taken by user ${JSON.stringify(holder.user_id)}.`)
}

/** Why a value cannot be a username, or undefined when it can (the API and --import share this rule). */
export function usernameProblem(username: unknown): string | undefined {
  if (typeof username !== 'string' || username.trim() === '') return 'username must be a non-empty string'
  return undefined
}
