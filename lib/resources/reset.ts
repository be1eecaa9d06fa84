import type { Answer, Context } from '../http/context.ts'
import type { ResetSummary } from '../data/reset.ts'
import { HttpError } from '../http-error.ts'
import { isLoopbackHost } from '../http/guards.ts'
import { jsonAnswer, noContent } from '../http/respond.ts'

/**
 * `POST /?_reset` on the API root. The query is reserved there (as `?_children`
 * is): without a fixture the answer is a 404, never a new document. The write
 * guards (--readonly, --token) have run already; on a server reachable from
 * other machines a reset also needs a token, so a stray request cannot wipe it.
 */
export async function answerReset(context: Context, reset: (() => Promise<ResetSummary>) | undefined): Promise<Answer> {
  const { method, settings } = context
  const allow = settings.guards.readonly ? 'OPTIONS' : 'POST, OPTIONS'
  if (method === 'OPTIONS') return noContent({ Allow: allow })
  if (method !== 'POST') throw new HttpError(405, `${method} /?_reset is not allowed; a reset is a POST.`, { Allow: allow })
  if (!reset) {
    throw new HttpError(404, 'Resetting is off: this server was started without a fixture. Start it with --fixture db.json (or a store folder) to reset with POST /?_reset.')
  }
  const bound = settings.guards.host ?? context.connection.localAddress
  if ((settings.guards.token ?? settings.adminToken) === undefined && (bound === undefined || !isLoopbackHost(bound))) {
    throw new HttpError(403, 'This server is reachable from other machines, so a reset needs the write token: start it with --token and send "Authorization: Bearer <token>".')
  }
  const summary = await reset()
  return jsonAnswer(context, 200, { ...summary, ms: Math.round(summary.ms * 10) / 10 })
}
