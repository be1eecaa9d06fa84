import type { Answer, Answering, Context } from '../http/context.ts'
import { preconditionsOf, urlOf } from '../http/context.ts'
import type { NodePath } from '../store/store.ts'
import { HttpError } from '../http-error.ts'
import { NothingStored } from '../data/documents.ts'
import type { JsonObject } from '../json/values.ts'
import { jsonAnswer, jsonTextAnswer, noContent } from '../http/respond.ts'
import { compactJsonOf } from '../data/changes.ts'
import { collectionAnswer, storedDocumentAnswer, emptyCollectionAnswer } from './collection.ts'
import { parseDependents, removeWithDependents } from '../listing/relations.ts'
import { checkNewChildPath, joinPath } from '../path.ts'
import { ID_LENGTH } from '../store/new-id.ts'
import { optionsHeaders, readPatch } from './patch.ts'

/**
 * The generic data API (docs/http-api.md, "The generic data API"): every URL not
 * declared elsewhere names a node that may hold a document and may have
 * children. A write below a declared member needs that member (`requireOwners`).
 */
export const genericMethods = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']

/**
 * Checks that a generic write below a declared member may happen (lib/resources/declared.ts makes it); `parent` is
 * the node the new document goes under. Returns the innermost owner's path, if any.
 */
export type RequireOwners = (context: Context, parent: NodePath) => Promise<NodePath | undefined>

/** The root takes reads and POST only: replacing or deleting the whole store by one request is refused. */
const rootMethods = ['GET', 'HEAD', 'POST', 'OPTIONS']

export function handleGeneric(context: Context, requireOwners: RequireOwners): Answering {
  // Reads first, with no frame of their own: a hot document is answered in the turn it was asked for.
  if (context.method === 'GET' || context.method === 'HEAD') return readNode(context)
  return answerOtherMethods(context, requireOwners)
}

async function answerOtherMethods(context: Context, requireOwners: RequireOwners): Promise<Answer> {
  const { method, path } = context
  const allowed = path.length === 0 ? rootMethods : genericMethods
  if (method === 'OPTIONS') return noContent(optionsHeaders(allowed))
  if (!allowed.includes(method)) {
    throw new HttpError(405, `${method} is not allowed on ${joinPath(path)}.`, { Allow: allowed.join(', ') })
  }
  switch (method) {
    case 'POST':
      return createChild(context, requireOwners)
    case 'PUT':
      return replaceDocument(context, requireOwners)
    case 'PATCH':
      return patchDocument(context)
    default:
      return deleteNode(context)
  }
}

/**
 * GET of any node: its document, else its children's documents, else 404. Shared with declared collections.
 * A document the store can tell at once (Documents.readTextNow) is answered at once, not as a promise.
 */
export function readNode(context: Context, path: NodePath = context.path): Answering {
  if (context.query.has('_children')) return readChildNames(context, path)
  return readStored(context, path, listOrMissing)
}

/**
 * The read of one node's document, for a generic node and a declared member alike: a hot
 * document (Documents.readTextNow) is answered in the turn it was asked for (docs/speed.md),
 * one read from the disk when it arrives; where the node holds none, `absent` answers.
 */
export function readStored(context: Context, path: NodePath, absent: (context: Context, path: NodePath) => Answering): Answering {
  try {
    const stored = context.documents.readTextNow(path)
    if (stored === undefined) return absent(context, path)
    if (!('then' in stored)) return storedDocumentAnswer(context, path, stored)
    return stored.then((read) => (read ? storedDocumentAnswer(context, path, read) : absent(context, path)))
  } catch (error) {
    return Promise.reject(error)
  }
}

async function readChildNames(context: Context, path: NodePath): Promise<Answer> {
  const names = await context.documents.children(path)
  if (names) return jsonAnswer(context, 200, names)
  if (path.length === 0) return jsonAnswer(context, 200, [])
  throw new NothingStored(path)
}

/** A node without a document: its children's documents, else 404. */
async function listOrMissing(context: Context, path: NodePath): Promise<Answer> {
  const listed = await collectionAnswer(context, path)
  if (listed) return listed
  // The root always exists: an empty store is an empty collection, not a 404.
  if (path.length === 0) return emptyCollectionAnswer(context, path)
  throw new NothingStored(path)
}

/** A POST is refused before anything is written when its new document's URL would be past the path limits (414). Shared with declared collections. */
export function refuseUnreachableChild(context: Context): void {
  checkNewChildPath(context.target, ID_LENGTH, context.settings.pathLimits)
}

async function createChild(context: Context, requireOwners: RequireOwners): Promise<Answer> {
  refuseUnreachableChild(context)
  const body = await context.body.json()
  if (Object.hasOwn(body, 'id')) {
    throw new HttpError(400, 'POST generates the id; to choose one, PUT the document at its own URL instead.')
  }
  const owner = await requireOwners(context, context.path)
  const created = await context.documents.create(context.path, (id) => ({ id, ...body }), { owner })
  const location = urlOf(context, [...context.path, created.id])
  return jsonTextAnswer(context, 201, compactJsonOf(created.doc), { Location: location, ETag: created.etag })
}

async function replaceDocument(context: Context, requireOwners: RequireOwners): Promise<Answer> {
  const body = await context.body.json()
  const id = checkId(context.path, body)
  const owner = await requireOwners(context, context.path.slice(0, -1))
  const outcome = await context.documents.write(context.path, () => ({ id, ...withoutId(body) }), {
    preconditions: preconditionsOf(context),
    owner,
    replaces: true,
  })
  return jsonTextAnswer(context, outcome.created ? 201 : 200, compactJsonOf(outcome.doc), {
    ETag: outcome.etag,
    ...(outcome.created ? { Location: urlOf(context, context.path) } : {}),
  })
}

async function patchDocument(context: Context): Promise<Answer> {
  const patch = await readPatch(context)
  const id = checkId(context.path, patch.merge ?? {})
  const outcome = await context.documents.write(
    context.path,
    async (current) => {
      if (!current) throw new NothingStored(context.path)
      const merged = await patch.apply(current.doc)
      // A JSON Patch's result is held to a PUT body's rule: its id may follow the URL, never differ.
      if (!patch.merge) return { id: checkId(context.path, merged), ...withoutId(merged) }
      // An imported numeric id stays a number unless the patch spells it otherwise.
      return { id: Object.hasOwn(patch.merge, 'id') || String(current.doc.id) !== String(id) ? id : current.doc.id, ...withoutId(merged) }
    },
    { preconditions: preconditionsOf(context), patch: patch.merge },
  )
  return jsonAnswer(context, 200, outcome.doc, { ETag: outcome.etag })
}

async function deleteNode(context: Context): Promise<Answer> {
  const dependents = parseDependents(context.query)
  const { doc } = await removeWithDependents(context.documents, context.path, dependents, preconditionsOf(context), context.settings)
  return doc ? jsonAnswer(context, 200, doc) : noContent()
}

/**
 * A generic document's `id` is its last path segment (docs/http-api.md, "The generic data API"); a body may
 * repeat it, never contradict it. The number 7 is the segment `7`, so `"id": 7` may be sent for `/posts/7`.
 */
function checkId(path: NodePath, body: JsonObject): string | number {
  const id = path[path.length - 1]
  if (!Object.hasOwn(body, 'id') || body.id === id) return id
  if (typeof body.id === 'number' && String(body.id) === id) return body.id
  throw new HttpError(400, `The body's "id" (${JSON.stringify(body.id)}) differs from the URL's last segment "${id}"; ids follow the URL.`)
}

function withoutId(doc: JsonObject): JsonObject {
  const { id: _id, ...rest } = doc
  return rest
}
