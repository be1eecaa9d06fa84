import type { Context } from './context.ts'
import type { NodePath } from './store/store.ts'
import { sendJson } from './respond.ts'

/**
 * Answers GET on a collection: the documents of the node's children in
 * ascending id order. Returns false when the node does not exist.
 */
export async function sendCollection(context: Context, path: NodePath): Promise<boolean> {
  const docs = await context.documents.list(path)
  if (!docs) return false
  sendJson(context, 200, docs)
  return true
}
