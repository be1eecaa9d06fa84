import type { Context } from '../context.ts'
import type { NodePath } from '../store/store.ts'
import { HttpError } from '../errors.ts'

/**
 * Nodes below a user or a playlist live and die with it (SPEC §4): a write
 * under `/user/:user_id/...` needs that user, and under
 * `/user/:user_id/playlist/:playlist_id/...` that playlist too.
 * `parent` is the node the new document goes under.
 */
export async function requireOwners(context: Context, parent: NodePath): Promise<void> {
  if (parent[0] !== 'user' || parent.length < 2) return
  const userId = parent[1]
  if (!(await context.documents.read(['user', userId]))) {
    throw new HttpError(404, `There is no user ${JSON.stringify(userId)}; create it with POST /user first.`)
  }
  if (parent[2] !== 'playlist' || parent.length < 4) return
  const playlistId = parent[3]
  if (!(await context.documents.read(['user', userId, 'playlist', playlistId]))) {
    throw new HttpError(404, `User ${JSON.stringify(userId)} has no playlist ${JSON.stringify(playlistId)}.`)
  }
}
