import type { Context } from './context.ts'
import type { Doc } from './store/store.ts'
import { sendJson } from './respond.ts'

/** Answers a collection: the children's documents in ascending id order. */
export function sendCollection(context: Context, docs: Doc[]): void {
  sendJson(context, 200, docs)
}
