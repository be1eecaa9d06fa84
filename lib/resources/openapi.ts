import type { Answer, Context } from '../http/context.ts'
import type { Doc, NodePath } from '../store/store.ts'
import { HttpError } from '../http-error.ts'
import { jsonTextAnswer, noContent } from '../http/respond.ts'
import { HEAVY_STEP, pacer, type Pace } from '../data/pace.ts'
import { packageVersion } from '../package.ts'
import { lineageOf, type Family } from '../data/declarations.ts'
import { defineValue } from '../json/values.ts'
import { batchSchemas, withBatch } from './openapi-batch.ts'
import { accountSchemas, describeAccounts, describeFamilyAccounts, familyResponses, familySchemes, registerOperation, responses as authResponses, securitySchemes as authSchemes, userInputSchema, type DescribedFamily } from './openapi-auth.ts'
import { withoutPasswordHashes } from '../auth/password-hashes.ts'

/** A JSON Patch document (RFC 6902 §3): an array of operations, each with its `op` and `path`. */
const JSON_PATCH_SCHEMA = {
  type: 'array',
  items: {
    type: 'object',
    required: ['op', 'path'],
    properties: {
      op: { enum: ['add', 'remove', 'replace', 'move', 'copy', 'test'] },
      path: { type: 'string' },
      from: { type: 'string' },
      value: {},
    },
  },
}

/**
 * The API description (docs/http-api.md, "Describing the API"): an OpenAPI 3.1
 * document of the running server, built on every request from what the
 * store holds now. Bounded, whatever the documents: at most MAX_COLLECTIONS
 * top-level nodes are described, each from at most SAMPLE_SIZE of its
 * documents and SAMPLE_TEXT of their text, and the schemas name at most
 * MAX_FIELDS fields in all, MAX_FIELDS_PER_OBJECT of one object.
 */
export const MAX_COLLECTIONS = 50
export const SAMPLE_SIZE = 100
/** Characters of JSON a collection's sample stops at (1 MiB of ASCII); its first document is read whatever its size. */
export const SAMPLE_TEXT = 1024 * 1024
/** Fields the schemas of one description name in all, and of one object. */
export const MAX_FIELDS = 2000
export const MAX_FIELDS_PER_OBJECT = 100
/** A field whose name is longer is left out of the schemas (as a filter on it would be refused). */
const MAX_FIELD_NAME = 256
/** Nested objects deeper than this are described as any object. */
const MAX_SCHEMA_DEPTH = 4
/** Documents read at a time for a sample, so a sample of big ones stops early. */
const SAMPLE_BATCH = 10

type Schema = Record<string, unknown>
type Operation = Record<string, unknown>

/** `GET /?_openapi` on the API root. */
export async function answerOpenApi(context: Context): Promise<Answer> {
  const { method } = context
  if (method === 'OPTIONS') return noContent({ Allow: 'GET, HEAD, OPTIONS' })
  if (method !== 'GET' && method !== 'HEAD') {
    throw new HttpError(405, `${method} /?_openapi is not allowed; the API description is read with GET.`, { Allow: 'GET, HEAD, OPTIONS' })
  }
  const pace = pacer()
  const description = await describeApi(context, pace)
  return jsonTextAnswer(context, 200, JSON.stringify(description), { 'Cache-Control': 'no-store' })
}

export async function describeApi(context: Context, pace: Pace = pacer()): Promise<Record<string, unknown>> {
  const readonly = context.settings.guards.readonly
  const paths: Record<string, Record<string, Operation>> = {}
  // The batch's schemas only where it is described: a read-only server refuses it.
  const schemas: Record<string, Schema> = { ...baseSchemas, ...(readonly ? {} : batchSchemas) }
  const only = (operations: Record<string, Operation>) => (readonly ? pick(operations, ['get', 'head', 'options']) : operations)

  const root = collectionOperations('the root: every top-level document', 'Document', 'root')
  paths['/'] = only({ ...root, post: withBatch(root.post) })
  const { families } = context.settings
  const describedFamilies: DescribedFamily[] = []
  // A declaration is bounded (lib/data/declarations.ts), and its description is paced family by family.
  for (const family of families) {
    describedFamilies.push({ family, ...describeFamily(family, paths, schemas, only) })
    const turn = pace(HEAVY_STEP)
    if (turn) await turn
  }

  const top = (await context.documents.children([])) ?? []
  const declaredTop = new Set(families.filter((family) => !family.parent).map((family) => family.collection))
  const undeclared = top.filter((name) => !declaredTop.has(name))
  const described = undeclared.slice(0, MAX_COLLECTIONS)
  const names = new Set(Object.keys(schemas))
  const fields = new FieldBudget(pace)
  // json-server-auth's flow on a db.json (the json-server mode); elsewhere the declared families' accounts (docs/accounts.md).
  const auth = context.settings.auth && context.settings.jsonServer
  const accounts = context.settings.auth && !context.settings.jsonServer ? families.find((family) => !family.parent && family.unique[0] === 'username') : undefined
  let users: string | undefined
  for (const name of described) {
    const schemaName = uniqueName(name, names)
    const url = '/' + encodeURIComponent(name)
    // What a client sends (POST, PUT, a merge patch) is the stored schema with every field optional:
    // the id follows the URL or the server, and a field every sampled document has is no rule of the store.
    const inputName = uniqueName(`${schemaName}Input`, names)
    const own = await context.documents.read([name])
    if (own) {
      schemas[schemaName] = await inferSchema([own.doc], fields)
      schemas[inputName] = inputSchema(schemas[schemaName], `The document ${name} as sent`)
      paths[url] = only(documentOperations(`the document ${name}`, schemaName, operationName(schemaName), inputName, []))
      continue
    }
    schemas[schemaName] = await inferSchema(await sampleOf(context, name, pace), fields)
    schemas[inputName] = inputSchema(schemas[schemaName], `A document of ${name} as sent: the id is the URL's or the server's`)
    paths[url] = only(collectionOperations(`the collection ${name}`, schemaName, operationName(schemaName), inputName))
    // Under --auth a POST to users registers (docs/accounts.md), and a user is sent with its password.
    if (auth && name === 'users') {
      users = schemaName
      schemas[inputName] = userInputSchema(schemas[inputName])
      if (paths[url].post) paths[url].post = registerOperation(`create_${operationName(schemaName)}`)
    }
    paths[`${url}/{id}`] = only(documentOperations(`a document of ${name}`, schemaName, operationName(schemaName) + 'Item', inputName, ['id']))
  }
  // Any other URL is a generic node: one level and two levels deep stand for every depth.
  paths['/{collection}'] = only(collectionOperations('any other collection', 'Document', 'anyCollection', 'Document', ['collection']))
  paths['/{collection}/{id}'] = only(documentOperations('any other document', 'Document', 'anyDocument', 'Document', ['collection', 'id']))

  const secured = context.settings.guards.token !== undefined
  secure(paths, secured)
  if (auth) {
    Object.assign(schemas, accountSchemas(users))
    describeAccounts(paths, context.settings.rewrites, described)
  }
  const administrator = context.settings.adminToken !== undefined
  if (accounts) {
    const users = describedFamilies.find((one) => one.family === accounts)!
    // A user is sent with its password, which no answer holds (the family's stored schema names none).
    schemas[`${users.schemaName}Input`] = userInputSchema(schemas[`${users.schemaName}Input`])
    Object.assign(schemas, accountSchemas(users.schemaName, 'username'))
    describeFamilyAccounts(paths, describedFamilies, accounts, administrator)
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'restdir',
      version: packageVersion(),
      description:
        'JSON documents, each at its own URL. Built from the store on every request: ' +
        `${described.length} of ${undeclared.length} top-level nodes described ` +
        `(at most ${MAX_COLLECTIONS}), each schema inferred from at most ${SAMPLE_SIZE} documents (and ${SAMPLE_TEXT} characters of them), ` +
        `naming at most ${MAX_FIELDS_PER_OBJECT} fields of an object and ${MAX_FIELDS} in all` +
        (fields.leftSomeOut ? ' (some fields are left out here)' : '') +
        '.' +
        (readonly ? ' This server is read-only.' : '') +
        ' Any GET answers Server-Sent Events (text/event-stream) when asked with Accept: text/event-stream (described in words on each GET, not as a second answer, so that a typed client\'s answer stays the JSON).' +
        (secured ? ' Every write needs the bearer token; reads need none.' : '') +
        (auth ? ' Accounts (--auth): POST /register and POST /login answer a token; a guard in front of a path (/600/…, /640/…) lets only its owner or signed-in users in, and a routes file may put one in front of a plain path.' : '') +
        (accounts ? ` Accounts (--auth): POST /${accounts.collection} registers and POST /login answers a token; a user reads and writes their own subtree, and each family's access says who else may; the root and undeclared paths are the administrator's${administrator ? ' (--token)' : ''}.` : ''),
    },
    servers: [{ url: context.base === '' ? '/' : context.base }],
    paths,
    components: {
      schemas,
      parameters,
      responses: auth ? { ...responses, ...authResponses } : accounts ? { ...responses, ...familyResponses } : responses,
      headers,
      ...(secured ? { securitySchemes } : auth ? { securitySchemes: authSchemes } : accounts ? { securitySchemes: familySchemes(accounts.collection, administrator) } : {}),
    },
  }
}

/** The token of --token (docs/cli.md), as RFC 6750 sends it. */
const securitySchemes = {
  bearer: { type: 'http', scheme: 'bearer', description: 'The --token the server was started with, as Authorization: Bearer <token>. Every write needs it; reads do not.' },
}

/**
 * Says of every operation who may call it: reads anyone (`security: []`, public), writes
 * anyone too, or with --token only its bearer, answered 401 without it (docs/http-api.md,
 * "Describing the API"; SECURITY.md).
 */
function secure(paths: Record<string, Record<string, Operation>>, secured: boolean): void {
  for (const operations of Object.values(paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const writes = !['get', 'head', 'options'].includes(method)
      operation.security = secured && writes ? [{ bearer: [] }] : []
      if (secured && writes) (operation.responses as Record<string, unknown>)['401'] ??= problem('401')
    }
  }
}

/** A stored document's schema as a client sends it: the same fields, none required. */
function inputSchema(stored: Schema, description: string): Schema {
  const { required: _required, ...rest } = stored
  return { ...rest, description }
}

/**
 * A declared family's two paths and two schemas (docs/http-api.md, "Declaring resources"): the
 * seed's user gives `/user`, `/user/{user_id}`, `User` and `UserInput` (what a client sends: no ids).
 */
function describeFamily(family: Family, paths: Record<string, Record<string, Operation>>, schemas: Record<string, Schema>, only: (operations: Record<string, Operation>) => Record<string, Operation>): { schemaName: string; paths: string[] } {
  const lineage = lineageOf(family)
  const owners = lineage.slice(0, -1)
  const name = family.collection
  const capitalized = (text: string) => text.replace(/\W/g, '_').replace(/^./, (first) => first.toUpperCase())
  // A name another family (or a base schema) has already: the family's lineage tells them apart (`Team_Note`).
  const plain = capitalized(name)
  const apart = plain in schemas || `${plain}Input` in schemas
  let schemaName = apart ? lineage.map((one) => capitalized(one.collection)).join('_') : plain
  // A top-level family named like a base schema (`problem`, `batch`) has no lineage to tell it apart.
  while (schemaName in schemas || `${schemaName}Input` in schemas) schemaName += '_'
  const operationName = apart ? lineage.map((one) => one.collection.replace(/\W/g, '_')).join('_') : name
  const collectionUrl = lineage.map((one, depth) => (depth < owners.length ? `/${one.collection}/{${one.idField}}` : `/${one.collection}`)).join('')
  const ownerIds = owners.map((owner) => owner.idField)
  const what = owners.length === 0 ? `${name}s` : `a ${owners[owners.length - 1].collection}'s ${name}s`
  paths[collectionUrl] = only(collectionOperations(what, schemaName, `${operationName}s`, `${schemaName}Input`, ownerIds))
  paths[`${collectionUrl}/{${family.idField}}`] = only(documentOperations(`a ${name}`, schemaName, operationName, `${schemaName}Input`, [...ownerIds, family.idField]))

  // Defined, never assigned: a field named `__proto__` is a property like any other.
  const given: Record<string, Schema> = {}
  for (const field of family.unique) defineValue(given, field, { type: 'string', minLength: 1 })
  for (const field of family.arrays) defineValue(given, field, { type: 'array', items: {} })
  const ids = [family.idField, ...ownerIds.slice().reverse()]
  const stored: Record<string, Schema> = {}
  for (const id of ids) defineValue(stored, id, { type: 'string' })
  for (const field of family.unique) defineValue(stored, field, { type: 'string', minLength: 1, description: `Unique among ${name}s` })
  for (const field of family.arrays) defineValue(stored, field, { type: 'array', items: {} })
  schemas[schemaName] = { type: 'object', properties: stored, required: [...ids, ...family.arrays] }
  const idsText = ids.length === 1 ? `${ids[0]} is` : `${ids.slice(0, -1).join(', ')} and ${ids[ids.length - 1]} are`
  schemas[`${schemaName}Input`] = { type: 'object', description: `A ${name} as sent: ${idsText} set by the server`, properties: given }
  return { schemaName, paths: [collectionUrl, `${collectionUrl}/{${family.idField}}`] }
}

function pick(operations: Record<string, Operation>, keys: string[]): Record<string, Operation> {
  return Object.fromEntries(Object.entries(operations).filter(([key]) => keys.includes(key)))
}

/** A component name (`^[\w.-]+$`, OpenAPI 3.1 §4.8.7.1) for a collection, unlike any taken. */
function uniqueName(name: string, taken: Set<string>): string {
  const plain = name.replace(/\W/g, '_').slice(0, 60) || '_'
  let candidate = /^[A-Za-z]/.test(plain) ? plain : 'C_' + plain
  for (let count = 2; taken.has(candidate); count++) candidate = `${plain}_${count}`
  taken.add(candidate)
  return candidate
}

/** Distinct from the declared resources' operation ids, whatever the collection is called. */
function operationName(schemaName: string): string {
  return 'store_' + schemaName
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })
const param = (name: string) => ({ $ref: `#/components/parameters/${name}` })
const problem = (status: string) => ({ $ref: `#/components/responses/${status}` })

function pathParameters(names: string[]): unknown[] {
  return names.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } }))
}

/** A JSON answer. The event stream the same GET answers when asked is said in words (EVENT_STREAM), apart: beside the JSON it would make a typed client's answer `T | string`. */
function readAnswer(description: string, schema: unknown, extraHeaders: Record<string, unknown> = {}) {
  return { description, headers: extraHeaders, content: { 'application/json': { schema } } }
}

/** How a GET is also an event stream (docs/http-api.md, "Live updates"). */
const EVENT_STREAM =
  'With Accept: text/event-stream the same URL answers Server-Sent Events instead of JSON: a value event with what this GET answers, ' +
  'then put, patch and delete events for every change at or below it, each with an id to resume from (Last-Event-ID or ?since=).'

function collectionOperations(what: string, schemaName: string, id: string, inputName = schemaName, pathNames: string[] = []): Record<string, Operation> {
  const parameters = pathParameters(pathNames)
  return {
    get: {
      operationId: `list_${id}`,
      summary: `List ${what}`,
      description: EVENT_STREAM,
      parameters: [...parameters, ...listingParameterNames.map(param)],
      responses: {
        200: readAnswer('The documents, filtered, sorted and sliced as asked', { type: 'array', items: ref(schemaName) }, {
          'X-Total-Count': { $ref: '#/components/headers/X-Total-Count' },
          Link: { $ref: '#/components/headers/Link' },
        }),
        400: problem('400'),
        404: problem('404'),
      },
    },
    post: {
      operationId: `create_${id}`,
      summary: `Create a document in ${what} with a new id`,
      parameters,
      requestBody: { required: false, content: { 'application/json': { schema: ref(inputName) }, 'application/x-www-form-urlencoded': { schema: { type: 'object' } } } },
      responses: {
        201: {
          description: 'Created',
          headers: { Location: { $ref: '#/components/headers/Location' }, ETag: { $ref: '#/components/headers/ETag' } },
          content: { 'application/json': { schema: ref(schemaName) } },
        },
        ...writeProblems,
      },
    },
    options: optionsOperation(`options_${id}`, parameters),
  }
}

function documentOperations(what: string, schemaName: string, id: string, inputName: string, pathNames: string[]): Record<string, Operation> {
  const parameters = pathParameters(pathNames)
  const stored = { description: 'The stored document', headers: { ETag: { $ref: '#/components/headers/ETag' } }, content: { 'application/json': { schema: ref(schemaName) } } }
  const body = { required: false, content: { 'application/json': { schema: ref(inputName) } } }
  return {
    get: {
      operationId: `get_${id}`,
      summary: `Read ${what}`,
      description: EVENT_STREAM,
      parameters: [...parameters, param('If-None-Match')],
      responses: {
        200: readAnswer('The document', ref(schemaName), { ETag: { $ref: '#/components/headers/ETag' } }),
        304: { description: 'Not modified: If-None-Match matched the current ETag' },
        404: problem('404'),
      },
    },
    put: {
      operationId: `replace_${id}`,
      summary: `Create or replace ${what}`,
      parameters: [...parameters, param('If-Match'), param('If-None-Match')],
      requestBody: body,
      responses: { 200: stored, 201: { ...stored, description: 'Created' }, ...writeProblems },
    },
    patch: {
      operationId: `patch_${id}`,
      summary: `Patch ${what}: a JSON Merge Patch (RFC 7396) or a JSON Patch (RFC 6902)`,
      parameters: [...parameters, param('If-Match')],
      requestBody: {
        required: false,
        content: {
          'application/json': { schema: ref(inputName) },
          'application/merge-patch+json': { schema: ref(inputName) },
          'application/json-patch+json': { schema: ref('JsonPatch') },
        },
      },
      responses: { 200: stored, ...writeProblems },
    },
    delete: {
      operationId: `delete_${id}`,
      summary: `Delete ${what} and everything below it`,
      parameters: [...parameters, param('If-Match')],
      responses: {
        200: { description: 'The deleted document', content: { 'application/json': { schema: ref(schemaName) } } },
        204: { description: 'Deleted; the node had no document of its own' },
        ...writeProblems,
      },
    },
    options: optionsOperation(`options_${id}`, parameters),
  }
}

function optionsOperation(operationId: string, parameters: unknown[]): Operation {
  return {
    operationId,
    summary: 'The methods this URL answers',
    parameters,
    responses: { 204: { description: 'No content', headers: { Allow: { $ref: '#/components/headers/Allow' } } } },
  }
}

const writeProblems = Object.fromEntries(['400', '401', '403', '404', '405', '409', '412', '413', '415'].map((status) => [status, problem(status)]))

/**
 * The first documents of a collection, up to SAMPLE_SIZE of them and
 * SAMPLE_TEXT characters of their JSON, read a few at a time.
 */
async function sampleOf(context: Context, name: string, pace: Pace): Promise<Doc[]> {
  const sample: Doc[] = []
  let text = 0
  while (sample.length < SAMPLE_SIZE && text < SAMPLE_TEXT) {
    const window = await context.documents.windowText([name] as NodePath, sample.length, Math.min(SAMPLE_SIZE, sample.length + SAMPLE_BATCH))
    if (!window || window.texts.length === 0) break
    for (const json of window.texts) {
      if (sample.length > 0 && text + json.length > SAMPLE_TEXT) return sample
      // Under --auth a sample is what an answer would give: no password hash (docs/accounts.md).
      sample.push(JSON.parse(context.settings.auth ? withoutPasswordHashes(json) : json) as Doc)
      text += json.length
      const turn = pace(json.length)
      if (turn) await turn
    }
    // A document removed meanwhile leaves the window short: the next one starts where this ended.
    if (window.texts.length < SAMPLE_BATCH) break
  }
  return sample
}

/** How many more fields the schemas may name, and whether they left some out; the work of inferring them is spent on `pace`. */
class FieldBudget {
  // Every field inferred is named twice: in the stored document's schema and in its input copy (inputSchema).
  left = MAX_FIELDS / 2
  leftSomeOut = false
  constructor(readonly pace: Pace) {}
}

/**
 * A JSON Schema for documents seen: each key's types merged over the sample,
 * `required` the keys every one of them has. Values stay open
 * (`additionalProperties` allowed): the store takes any JSON object, and a
 * field left out of a schema by the caps is still allowed.
 */
export async function inferSchema(docs: readonly unknown[], fields: FieldBudget): Promise<Schema> {
  if (docs.length === 0) return { type: 'object' }
  return merged(docs, 0, fields)
}

async function merged(values: readonly unknown[], depth: number, fields: FieldBudget): Promise<Schema> {
  const { pace } = fields
  const types = new Set<string>()
  const objects: Doc[] = []
  const items: unknown[] = []
  for (const value of values) {
    if (value === null) types.add('null')
    else if (Array.isArray(value)) {
      types.add('array')
      items.push(...value.slice(0, SAMPLE_SIZE))
    } else if (typeof value === 'object') {
      types.add('object')
      objects.push(value as Doc)
    } else if (typeof value === 'number') types.add(Number.isInteger(value) ? 'integer' : 'number')
    else types.add(typeof value)
    const turn = pace()
    if (turn) await turn
  }
  if (types.has('number')) types.delete('integer')
  const schema: Schema = { type: types.size === 1 ? [...types][0] : [...types].sort() }
  if (objects.length > 0 && depth < MAX_SCHEMA_DEPTH) {
    const keys = new Map<string, unknown[]>()
    for (const object of objects) {
      const names = Object.keys(object)
      for (const key of names) {
        let seen = keys.get(key)
        if (!seen) {
          if (keys.size >= MAX_FIELDS_PER_OBJECT || keys.size >= fields.left || key.length > MAX_FIELD_NAME) {
            fields.leftSomeOut = true
            continue
          }
          keys.set(key, (seen = []))
        }
        seen.push(object[key])
      }
      const turn = pace(names.length)
      if (turn) await turn
    }
    fields.left -= keys.size
    const properties: Record<string, Schema> = {}
    for (const [key, seen] of keys) {
      Object.defineProperty(properties, key, { value: await merged(seen, depth + 1, fields), enumerable: true, writable: true, configurable: true })
    }
    schema.properties = properties
    const required = [...keys].filter(([, seen]) => seen.length === objects.length).map(([key]) => key)
    if (required.length > 0) schema.required = required
  }
  if (items.length > 0 && depth < MAX_SCHEMA_DEPTH) schema.items = await merged(items, depth + 1, fields)
  return schema
}

const baseSchemas: Record<string, Schema> = {
  Problem: {
    type: 'object',
    description: 'An error answer (RFC 9457), sent as application/problem+json',
    properties: {
      type: { type: 'string' },
      title: { type: 'string' },
      status: { type: 'integer' },
      detail: { type: 'string' },
      index: { type: 'integer', minimum: 0, description: 'A batch\'s answer: the request that failed (or is malformed), from 0' },
    },
    required: ['type', 'title', 'status', 'detail'],
  },
  JsonPatch: JSON_PATCH_SCHEMA,
  Document: {
    type: 'object',
    description: 'Any JSON object; restdir sets its id to the last segment of its URL',
    properties: { id: { type: 'string' } },
  },
}

const listingParameterNames = ['_sort', '_order', '_start', '_end', '_limit', '_page', '_per_page', '_where', '_embed', '_expand', 'q', 'filter']

const parameters: Record<string, unknown> = {
  _sort: { name: '_sort', in: 'query', description: 'Fields to sort by, comma-separated (json-server)', schema: { type: 'string' } },
  _order: { name: '_order', in: 'query', description: 'asc or desc for each _sort field, comma-separated', schema: { type: 'string' } },
  _start: { name: '_start', in: 'query', description: 'First index of the slice', schema: { type: 'integer', minimum: 0 } },
  _end: { name: '_end', in: 'query', description: 'Index past the end of the slice', schema: { type: 'integer', minimum: 0 } },
  _limit: { name: '_limit', in: 'query', description: 'Most documents in the answer (a page with _page)', schema: { type: 'integer', minimum: 0 } },
  _page: { name: '_page', in: 'query', description: 'Page number, from 1', schema: { type: 'integer', minimum: 1 } },
  _per_page: { name: '_per_page', in: 'query', description: 'With _page, json-server 1.0 paging: the answer is a page envelope (first, prev, next, last, pages, items, data)', schema: { type: 'integer', minimum: 1 } },
  _where: { name: '_where', in: 'query', description: 'json-server 1.0 conditions as JSON, e.g. {"or":[{"views":{"gt":20}},{"title":{"contains":"a"}}]}', schema: { type: 'string' } },
  _embed: { name: '_embed', in: 'query', description: 'Children or foreign-key collections to embed in each document, comma-separated', schema: { type: 'string' } },
  _expand: { name: '_expand', in: 'query', description: 'Parents to embed in each document (json-server 0.17), comma-separated', schema: { type: 'string' } },
  q: { name: 'q', in: 'query', description: 'Full-text search in every value', schema: { type: 'string' } },
  filter: {
    name: 'filter',
    in: 'query',
    description: 'field=value, field_ne=, field_gte=, field_lte=, field_like= (json-server 0.17), field:eq|ne|lt|lte|gt|gte|in|contains|startsWith|endsWith= (json-server 1.0); dotted fields reach nested ones; repeated keys mean any of',
    style: 'form',
    explode: true,
    schema: { type: 'object', additionalProperties: { type: 'string' } },
  },
  'If-Match': { name: 'If-Match', in: 'header', description: 'Write only if the ETag matches (else 412)', schema: { type: 'string' } },
  'If-None-Match': { name: 'If-None-Match', in: 'header', description: 'GET: 304 if the ETag matches; PUT with *: create only (else 412)', schema: { type: 'string' } },
}

const headers: Record<string, unknown> = {
  ETag: { description: 'Strong entity tag of the document', schema: { type: 'string' } },
  Location: { description: 'URL of the new document', schema: { type: 'string' } },
  'X-Total-Count': { description: 'How many documents matched, before slicing', schema: { type: 'integer' } },
  Link: { description: 'first, prev, next and last pages (RFC 8288)', schema: { type: 'string' } },
  Allow: { description: 'The methods this URL answers', schema: { type: 'string' } },
}

const problemTitles: Record<string, string> = {
  '400': 'Bad request: invalid JSON, a wrong id, an unknown query parameter',
  '401': 'The write token is missing or wrong',
  '403': 'Refused: a non-loopback Host, or an origin not allowed',
  '404': 'Nothing is stored here',
  '405': 'Method not allowed (see Allow), or the server is read-only',
  '409': 'Conflict: a unique value (such as a username) is taken',
  '412': 'A precondition (If-Match, If-None-Match) failed',
  '413': 'The body is over the size limit, or a batch holds too many requests',
  '415': 'The body is neither JSON nor a form',
  '501': 'This store cannot apply a batch as one step',
}

const responses = Object.fromEntries(
  Object.entries(problemTitles).map(([status, description]) => [
    status,
    { description, content: { 'application/problem+json': { schema: ref('Problem') } } },
  ]),
)
