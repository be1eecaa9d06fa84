import type { Answer, Context } from '../../http/context.ts'
import type { Documents } from '../../data/documents.ts'
import { jsonAnswer } from '../../http/respond.ts'
import { defineValue } from '../../json/values.ts'
import { withoutOwnId } from './singular.ts'
import { emptiedCollections } from './collections.ts'

/** `GET /db` (docs/json-server.md, "The json-server mode"): the whole database, as databaseOf reads it. */
export async function databaseAnswer(context: Context): Promise<Answer> {
  return jsonAnswer(context, 200, await databaseOf(context.documents))
}

/**
 * The whole database as json-server's db.json holds it, each top-level
 * collection an array of its documents and each top-level document (a singular
 * resource) an object; `GET /db` answers it and a snapshot (`s` and Enter,
 * docs/json-server.md, "Snapshots") writes it. Nodes deeper than json-server
 * has (`/posts/1/notes/…`) are not in it.
 */
export async function databaseOf(documents: Documents): Promise<Record<string, unknown>> {
  const database: Record<string, unknown> = {}
  // A db.json's resources in the file's order, as json-server answers its database.
  const held = await documents.resources()
  for (const name of held) {
    const stored = await documents.read([name])
    // A collection named `__proto__` is a key like any other.
    defineValue(database, name, stored ? withoutOwnId(stored.doc, name) : ((await documents.list([name])) ?? []))
  }
  // A collection whose last item went is kept, `[]`, as json-server keeps it.
  for (const name of emptiedCollections(documents, held)) defineValue(database, name, [])
  return database
}
