/**
 * `POST /?_batch` in the API description (docs/http-api.md, "Batches" and "Describing the API").
 * An OpenAPI path holds no query (RFC 3986 §3.3; OpenAPI 3.1 §4.8.8), and `POST /` is already the
 * root's create, so the batch is that same operation with its `_batch` query parameter: its body
 * may then be a `Batch`, and `200` is the batch's answer. The schemas say what lib/resources/batch.ts
 * takes and answers; spec/every-store/openapi.spec.ts sends the example to the server and checks its answer.
 */

type Schema = Record<string, unknown>
type Operation = Record<string, unknown>

/**
 * Most requests in one batch: MAX_BATCH_REQUESTS of lib/resources/batch.ts, repeated here because
 * lib/http sits a layer below lib/resources (docs/architecture.md); spec/every-store/openapi.spec.ts checks they agree.
 */
export const BATCH_REQUESTS_LIMIT = 1000

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })

/** A pattern that matches `text` in any letter case: JSON Schema patterns take no flags, and header names are caseless (RFC 9110 §5.1). */
function caseless(text: string): string {
  return [...text].map((char) => (/[a-z]/i.test(char) ? `[${char.toUpperCase()}${char.toLowerCase()}]` : char.replace(/[.*+?^${}()|[\]\\]/, '\\$&'))).join('')
}

const HEADER_NAMES = ['If-Match', 'If-None-Match', 'Content-Type']

/** A request of the batch whose body is a JSON Patch: a PATCH with a Content-Type that says so (docs/http-api.md, "PATCH"). */
const JSON_PATCH_REQUEST = {
  required: ['method', 'headers'],
  properties: {
    method: { const: 'PATCH' },
    // Some Content-Type header is a JSON Patch: not every one of them is something else.
    headers: { not: { patternProperties: { [`^${caseless('Content-Type')}$`]: { not: { type: 'string', pattern: `^${caseless('application/json-patch+json')}\\s*(;|$)` } } } } },
  },
}

export const batchSchemas: Record<string, Schema> = {
  Batch: {
    type: 'object',
    description: `The body of POST /?_batch: writes applied in order, all or none, at most ${BATCH_REQUESTS_LIMIT}`,
    required: ['requests'],
    properties: { requests: { type: 'array', minItems: 1, maxItems: BATCH_REQUESTS_LIMIT, items: ref('BatchRequest') } },
    additionalProperties: false,
  },
  BatchRequest: {
    type: 'object',
    description:
      'One write of a batch, answered as it alone would be, seeing the requests before it. ' +
      'A path segment, or a string anywhere in the body, that is exactly $N.id stands for the id of the document request N (from 0, an earlier one) wrote.',
    required: ['method', 'path'],
    properties: {
      method: { enum: ['PUT', 'POST', 'PATCH', 'DELETE'] },
      path: {
        type: 'string',
        pattern: '^/[^#]*$',
        description: 'Below the API root, without the prefix or mount path; it may carry a query, but not _batch, _reset or _openapi',
      },
      headers: {
        type: 'object',
        description: 'If-Match, If-None-Match and Content-Type only, in any letter case',
        properties: Object.fromEntries(HEADER_NAMES.map((name) => [name, { type: 'string' }])),
        propertyNames: { pattern: `^(${HEADER_NAMES.map(caseless).join('|')})$` },
        additionalProperties: { type: 'string' },
      },
      body: {
        description: 'A JSON object (a document or a merge patch), or the array of a JSON Patch on a PATCH whose Content-Type is application/json-patch+json',
        oneOf: [{ type: 'object', additionalProperties: {} }, ref('JsonPatch')],
      },
    },
    additionalProperties: false,
    if: JSON_PATCH_REQUEST,
    else: { properties: { body: { type: 'object' } } },
  },
  BatchAnswer: {
    type: 'object',
    description: 'The answer of POST /?_batch when every request succeeded and all of them were stored: one response per request, in order',
    required: ['responses'],
    properties: { responses: { type: 'array', minItems: 1, maxItems: BATCH_REQUESTS_LIMIT, items: ref('BatchResponse') } },
  },
  BatchResponse: {
    type: 'object',
    description: 'What the request alone would have been answered',
    required: ['status', 'headers', 'body'],
    properties: {
      status: { type: 'integer', minimum: 200, maximum: 399 },
      headers: { type: 'object', description: 'Location, ETag, Content-Type, …', additionalProperties: { type: 'string' } },
      body: { description: 'The JSON body; null when there was none (a 204)' },
    },
  },
}

/** A batch that works on an empty store: checking a cart out into an order and its invoice. */
export const batchExample = {
  requests: [
    { method: 'POST', path: '/carts', body: { item: 'lamp', count: 1 } },
    { method: 'POST', path: '/orders', body: { item: 'lamp', count: 1, cart: '$0.id' } },
    { method: 'PUT', path: '/invoices/$1.id', body: { order: '$1.id', total: 40 }, headers: { 'If-None-Match': '*' } },
    { method: 'PATCH', path: '/orders/$1.id', body: [{ op: 'add', path: '/invoice', value: '$1.id' }], headers: { 'Content-Type': 'application/json-patch+json' } },
    { method: 'DELETE', path: '/carts/$0.id' },
  ],
}

/** The root's create (`POST /`) as it also is with `?_batch`: the same URL and method, told apart by the query. */
export function withBatch(create: Operation): Operation {
  const requestBody = create.requestBody as { content: Record<string, { schema: unknown }> }
  const parameters = (create.parameters as unknown[] | undefined) ?? []
  const responses = create.responses as Record<string, unknown>
  return {
    ...create,
    summary: `${String(create.summary)}; with ?_batch, apply a batch of writes, all or none`,
    description:
      'With ?_batch the body is a Batch: each request is answered as it alone would be, and when every one succeeds all of them are stored ' +
      'in one step and the answer is 200 with a BatchAnswer. When one fails nothing is stored, and the answer is that request\'s status ' +
      'with a Problem whose index is its position, from 0. A malformed batch is a 400, one of more than ' +
      `${BATCH_REQUESTS_LIMIT} requests a 413.`,
    parameters: [
      ...parameters,
      { name: '_batch', in: 'query', description: 'Present (its value is ignored: /?_batch): the body is a Batch', schema: { type: 'string' } },
    ],
    requestBody: {
      ...requestBody,
      content: {
        ...requestBody.content,
        'application/json': {
          schema: { anyOf: [requestBody.content['application/json'].schema, ref('Batch')] },
          examples: { batch: { summary: 'With ?_batch: a cart checked out into an order and its invoice', value: batchExample } },
        },
      },
    },
    responses: {
      200: { description: 'With ?_batch: every request succeeded, and all of them were stored', content: { 'application/json': { schema: ref('BatchAnswer') } } },
      ...responses,
      501: { $ref: '#/components/responses/501' },
    },
  }
}
