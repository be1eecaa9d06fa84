import type { Context } from '../http/context.ts'
import { preconditionsOf, urlOf } from '../http/context.ts'
import type { Params } from '../http/router.ts'
import type { NodePath } from '../store/store.ts'
import { HttpError } from '../http-error.ts'
import { NothingStored } from '../data/documents.ts'
import { arrayFieldProblem, playlistFamily } from '../data/declarations.ts'
import { readJsonBody } from '../http/body.ts'
import type { JsonObject } from '../json/values.ts'
import { sendJson, sendNoContent } from '../http/respond.ts'
import { sendStoredDocument } from './collection.ts'
import { readNode, refuseUnreachableChild } from './generic.ts'
import { collectionPath, memberPath, requireOwnersOf, type DeclaredResource } from './declared.ts'
import { users } from './users.ts'
import { readPatch } from './patch.ts'

/**
 * Playlists of a user (docs/http-api.md, "Users and playlists"):
 * `{ "playlist_id": …, "user_id": <owner>, "songs": [ … ], …fields }` at
 * `/user/:user_id/playlist/:playlist_id`. `songs` is always an array; a song
 * is any JSON value. A playlist owns everything stored below it.
 */
export const playlists: DeclaredResource = {
  collection: playlistFamily.collection,
  idField: playlistFamily.idField,
  parent: users,
  missing: (params) => noPlaylist({ params }),
  create: createPlaylist,
  read: readPlaylist,
  replace: replacePlaylist,
  patch: patchPlaylist,
  remove: deletePlaylist,
}

function playlistPath(context: Context): NodePath {
  return memberPath(playlists, context.params)
}

async function createPlaylist(context: Context): Promise<void> {
  refuseUnreachableChild(context)
  const userId = context.params.user_id
  const body = await readJsonBody(context.req, context.settings.bodyLimits)
  refuseIdChanges(body, userId, undefined)
  const songs = songsOf(body)
  const parent = collectionPath(playlists, context.params)
  const owner = await requireOwnersOf(context, playlists)
  const created = await context.documents.create(parent, (id) => ({ playlist_id: id, user_id: userId, ...body, songs }), { owner })
  sendJson(context, 201, created.doc, { Location: urlOf(context, [...parent, created.id]), ETag: created.etag })
}

async function readPlaylist(context: Context): Promise<void> {
  // `?_children` names the playlist's children, as on any node.
  if (context.query.has('_children')) return readNode(context, playlistPath(context))
  const stored = await context.documents.readText(playlistPath(context))
  if (!stored) throw noPlaylist(context)
  await sendStoredDocument(context, playlistPath(context), stored)
}

async function replacePlaylist(context: Context): Promise<void> {
  const { user_id: userId, playlist_id: playlistId } = context.params
  const body = await readJsonBody(context.req, context.settings.bodyLimits)
  refuseIdChanges(body, userId, playlistId)
  const songs = songsOf(body)
  const outcome = await context.documents.write(playlistPath(context), (current) => {
    if (!current) throw noPlaylist(context)
    return { playlist_id: playlistId, user_id: userId, ...body, songs }
  }, { preconditions: preconditionsOf(context) })
  sendJson(context, 200, outcome.doc, { ETag: outcome.etag })
}

async function patchPlaylist(context: Context): Promise<void> {
  const { user_id: userId, playlist_id: playlistId } = context.params
  const patch = await readPatch(context)
  if (patch.merge) refuseIdChanges(patch.merge, userId, playlistId)
  if (patch.merge && Object.hasOwn(patch.merge, 'songs') && patch.merge.songs !== null) songsOf(patch.merge)
  const outcome = await context.documents.write(playlistPath(context), (current) => {
    if (!current) throw noPlaylist(context)
    const merged = patch.apply(current.doc)
    refuseIdChanges(merged, userId, playlistId)
    return { ...merged, playlist_id: playlistId, user_id: userId, songs: songsOf(merged) }
  }, { preconditions: preconditionsOf(context), patch: patch.merge })
  sendJson(context, 200, outcome.doc, { ETag: outcome.etag })
}

async function deletePlaylist(context: Context): Promise<void> {
  const { doc } = await context.documents.remove(playlistPath(context), preconditionsOf(context)).catch((error) => {
    throw error instanceof NothingStored ? noPlaylist(context) : error
  })
  if (doc) sendJson(context, 200, doc)
  else sendNoContent(context)
}

function noPlaylist(context: { params: Params }): HttpError {
  const { user_id: userId, playlist_id: playlistId } = context.params
  return new HttpError(404, `User ${JSON.stringify(userId)} has no playlist ${JSON.stringify(playlistId)}.`)
}

/**
 * `songs` defaults to an empty list and must be an array: `null` is refused
 * too. (In a PATCH, `null` removes the key first, RFC 7396, so the list resets to [].)
 */
function songsOf(doc: JsonObject): unknown[] {
  if (!Object.hasOwn(doc, 'songs')) return []
  const invalid = arrayFieldProblem('songs', doc.songs)
  if (invalid) throw new HttpError(400, `${invalid}. A song can be any JSON value.`)
  return doc.songs as unknown[]
}

/** `playlist_id` and `user_id` are the service's: a body may repeat them, never change them. */
function refuseIdChanges(body: JsonObject, userId: string, playlistId: string | undefined): void {
  if (Object.hasOwn(body, 'user_id') && body.user_id !== userId) {
    throw new HttpError(400, `user_id cannot be changed: this playlist belongs to user ${JSON.stringify(userId)}.`)
  }
  if (!Object.hasOwn(body, 'playlist_id')) return
  if (playlistId === undefined) throw new HttpError(400, 'playlist_id is assigned by the service; leave it out of the body.')
  if (body.playlist_id !== playlistId) {
    throw new HttpError(400, `playlist_id cannot be changed (this playlist is ${JSON.stringify(playlistId)}).`)
  }
}
