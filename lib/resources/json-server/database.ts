import type { Context } from '../../http/context.ts'
import { sendJson } from '../../http/respond.ts'
import { defineValue } from '../../json/values.ts'
import { withoutOwnId } from './singular.ts'

/**
 * `GET /db` (docs/json-server.md, "The json-server mode"): the whole database
 * as json-server's db.json holds it, each top-level collection an array of its
 * documents and each top-level document (a singular resource) an object.
 * Nodes deeper than json-server has (`/posts/1/notes/…`) are not in it.
 */
export async function sendDatabase(context: Context): Promise<void> {
  const { documents } = context
  const database: Record<string, unknown> = {}
  for (const name of (await documents.store.children([])) ?? []) {
    const stored = await documents.read([name])
    // A collection named `__proto__` is a key like any other.
    defineValue(database, name, stored ? withoutOwnId(stored.doc, name) : ((await documents.list([name])) ?? []))
  }
  sendJson(context, 200, database)
}
