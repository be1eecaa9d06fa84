import type { Context } from '../context.ts'
import { urlOf } from '../context.ts'
import type { Documents } from '../data/documents.ts'
import type { Doc, NodePath, StoredText } from '../store/store.ts'
import { sendDocument, sendJson, sendJsonText } from '../http/respond.ts'
import { checkParameters, FilterBudget, parseFilters, type Filter, type ListingLimits } from './filters.ts'
import { matchesFilters } from './match.ts'
import { joinRelations, parseRelations, type Relation } from './relations.ts'
import { parseSort, sortDocs, type SortKey } from './sort.ts'
import { Gate, pacer, type Pace } from './pace.ts'
import { HttpError } from '../http/errors.ts'
import type { StoreError } from '../store/errors.ts'

/**
 * A listing query in both of json-server's dialects (README, "Listing
 * queries"), so their clients work unchanged: filters (`field=`, 0.17's
 * `field_gte=`, 1.0's `field:gt=` and `_where`), full-text `q`,
 * `_sort`/`_order`, a window given by `_start`/`_end`/`_limit`,
 * `_page`/`_limit` (0.17) or `_page`/`_per_page` (1.0, answering a page
 * envelope), and relations to join (`_embed`, `_expand`). Any other `_`
 * parameter is a 400.
 */
export interface ListingQuery {
  filters: Filter[]
  sort: SortKey[]
  relations: Relation[]
  /** Documents [start, end) of the filtered, sorted list; end undefined means to the last. */
  start: number
  end: number | undefined
  /** Set for `_page` queries: they answer with a Link header, and with `_per_page` in json-server 1.0's envelope. */
  page?: { number: number; limit: number; envelope: boolean }
}

/**
 * Answers GET on a collection: the documents of the node's children in
 * ascending id order, narrowed by the listing query, with `X-Total-Count`
 * (the count before the window) and, for `_page`, a `Link` header.
 * Returns false when the node does not exist.
 */
export async function sendCollection(context: Context, path: NodePath): Promise<boolean> {
  const listing = parseListingQuery(context.query, context.settings.listingLimits)
  if (!needsEveryDocument(listing) && !listing.page?.envelope) return sendPlainWindow(context, path, listing)
  // One budget for the request's work on the event loop, from filtering to the answer's text (README, "Listing queries").
  const pace = pacer()
  const selection = needsEveryDocument(listing)
    ? await selectFromAll(context.documents, path, listing, pace)
    : await readWindow(context.documents, path, listing)
  if (!selection) return false
  const headers = listingHeaders(context, path, listing, selection.total)
  if (selection.skipped.length > 0) headers['X-Restdir-Skipped'] = reportSkipped(context, selection.skipped)
  const docsText = await documentsText(selection.docs, pace)
  sendJsonText(context, 200, listing.page?.envelope ? pageEnvelopeText(listing.page, selection.total, docsText) : docsText, headers)
  return true
}

/**
 * The JSON text of the documents answered, the very text JSON.stringify makes
 * of the array, made one document at a time and spent on `pace`: a big answer
 * is never one long step.
 */
async function documentsText(docs: readonly Doc[], pace: Pace): Promise<string> {
  const texts: string[] = []
  for (const doc of docs) {
    const text = JSON.stringify(doc)
    texts.push(text)
    const turn = pace(text.length)
    if (turn) await turn
  }
  return `[${texts.join(',')}]`
}

/**
 * A window in id order sent as an array (no filter, sort, relation or page
 * envelope): the documents' compact texts joined, which is the very text
 * `JSON.stringify` makes of the parsed documents, without parsing or
 * serialising any of them.
 */
async function sendPlainWindow(context: Context, path: NodePath, listing: ListingQuery): Promise<boolean> {
  const window = await context.documents.windowText(path, listing.start, listing.end)
  if (!window) return false
  const headers = listingHeaders(context, path, listing, window.total)
  if (window.skipped.length > 0) headers['X-Restdir-Skipped'] = reportSkipped(context, window.skipped)
  sendJsonText(context, 200, `[${window.texts.join(',')}]`, headers)
  return true
}

/**
 * GET of one document: as stored, or with the relations its query asks for
 * (`/posts/1?_embed=comments`), which makes it more than the stored document,
 * so without an ETag. A `_` parameter restdir does not know is a 400 here too.
 */
export async function sendStoredDocument(context: Context, path: NodePath, stored: StoredText): Promise<void> {
  // Most GETs have no query: nothing to check or join.
  if (context.query.size === 0) return sendDocument(context, stored)
  checkParameters(context.query)
  const relations = parseRelations(context.query)
  if (relations.length === 0) return sendDocument(context, stored)
  const [joined] = await joinRelations(context.documents, path.slice(0, -1), [JSON.parse(stored.json) as Doc], relations, pacer())
  sendJson(context, 200, joined)
}

/**
 * json-server 1.0's page (`_page=&_per_page=`): the documents under `data`,
 * with the page numbers around it and the count of matching documents.
 */
function pageEnvelope(page: { number: number; limit: number }, total: number, docs: unknown) {
  const pages = Math.max(1, Math.ceil(total / page.limit))
  return {
    first: 1,
    prev: page.number > 1 ? page.number - 1 : null,
    next: page.number < pages ? page.number + 1 : null,
    last: pages,
    pages,
    items: total,
    data: docs,
  }
}

/** The page envelope as text around the documents' text (`data` is its last key). */
function pageEnvelopeText(page: { number: number; limit: number }, total: number, docsText: string): string {
  const numbers = JSON.stringify(pageEnvelope(page, total, null))
  return `${numbers.slice(0, -'null}'.length)}${docsText}}`
}

/**
 * A collection is listed without the children whose document file is broken;
 * the answer names them in `X-Restdir-Skipped` (their URLs, comma-separated)
 * and the server log says what is wrong with each. A GET of one of them says so too.
 */
function reportSkipped(context: Context, skipped: readonly StoreError[]): string {
  const urls = skipped.map((error) => urlOf(context, error.path))
  for (const [index, error] of skipped.entries()) console.error(`restdir: left ${urls[index]} out of a listing: its document file ${error.reason}.`)
  return urls.join(', ')
}

/** A collection that does not exist yet but is known to be one (such as `/user` before the first user): `[]`. */
export function sendEmptyCollection(context: Context, path: NodePath): void {
  const listing = parseListingQuery(context.query, context.settings.listingLimits)
  sendJson(context, 200, listing.page?.envelope ? pageEnvelope(listing.page, 0, []) : [], listingHeaders(context, path, listing, 0))
}

interface Selection {
  docs: Doc[]
  /** How many documents matched, before the window. */
  total: number
  /** Children left out because their document file is broken. */
  skipped: readonly StoreError[]
}

function needsEveryDocument(listing: ListingQuery): boolean {
  return listing.filters.length > 0 || listing.sort.length > 0 || listing.relations.length > 0
}

/** Collections bigger than this are filtered and sorted one at a time (see bigListings). */
const BIG_COLLECTION = 500

/**
 * Filtering and sorting a big collection yields to other requests every few
 * milliseconds; and big listings take turns, one at a time, so that many of
 * them at once cannot crowd out the rest (README, "Listing queries").
 */
const bigListings = new WeakMap<Documents, Gate>()

async function selectFromAll(documents: Documents, path: NodePath, listing: ListingQuery, pace: Pace): Promise<Selection | undefined> {
  const queried = await queryStore(documents, path, listing, pace)
  if (queried) return queried
  const select = async () => {
    const all = await documents.listing(path)
    if (!all) return undefined
    const matching = await sortDocs(await filterDocs(all.docs, listing.filters, pace), listing.sort, pace)
    clampPage(listing, matching.length)
    const docs = await joinRelations(documents, path, matching.slice(listing.start, listing.end), listing.relations, pace)
    return { docs, total: matching.length, skipped: all.skipped }
  }
  // Joining relations reads other collections: such listings take turns whatever their size.
  if (listing.relations.length === 0 && !(await isBig(documents, path))) return select()
  let gate = bigListings.get(documents)
  if (!gate) bigListings.set(documents, (gate = new Gate(1)))
  return gate.run(select)
}

/**
 * The selection from a store that filters, sorts and pages itself (Store.query),
 * so that only the page's documents come into the process; undefined when it
 * has no such query, or leaves this one to the process.
 */
async function queryStore(documents: Documents, path: NodePath, listing: ListingQuery, pace: Pace): Promise<Selection | undefined> {
  const { store } = documents
  if (!store.query) return undefined
  const ask = () => store.query!(path, { filters: listing.filters, sort: listing.sort, start: listing.start, end: listing.end })
  let page = await ask()
  const start = listing.start
  if (page) clampPage(listing, page.total)
  if (page && listing.start !== start && page.total > 0) page = await ask()
  if (!page) return undefined
  const docs = await joinRelations(documents, path, page.texts.map((text) => JSON.parse(text) as Doc), listing.relations, pace)
  return { docs, total: page.total, skipped: [] }
}

/** Whether a collection holds more than BIG_COLLECTION children, asked without reading its documents. */
async function isBig(documents: Documents, path: NodePath): Promise<boolean> {
  const { store } = documents
  const count = store.documentChildren ? (await store.documentChildren(path, 0, 0))?.total : (await store.children(path))?.length
  return (count ?? 0) > BIG_COLLECTION
}

/** The documents that pass every filter, the work spent on `pace` (see matchesFilters). */
async function filterDocs(docs: Doc[], filters: readonly Filter[], pace: Pace): Promise<Doc[]> {
  if (filters.length === 0) return docs
  const kept: Doc[] = []
  for (const doc of docs) if (await matchesFilters(doc, filters, pace)) kept.push(doc)
  return kept
}

/**
 * A window of a collection in its natural (id) order, with the collection's
 * size. Without filters or sorting this is all a page needs, so this is the
 * one place where a page can be read without reading every document.
 */
async function readWindow(documents: Documents, path: NodePath, listing: ListingQuery): Promise<Selection | undefined> {
  const selection = await documents.window(path, listing.start, listing.end)
  if (!selection || !listing.page?.envelope || listing.start < selection.total || selection.total === 0) return selection
  // A 1.0 page past the last is the last page, as json-server answers it.
  clampPage(listing, selection.total)
  return documents.window(path, listing.start, listing.end)
}

/** json-server 1.0 answers a `_page` past the last with the last page; 0.17's `_page` answers `[]`. */
function clampPage(listing: ListingQuery, total: number): void {
  const page = listing.page
  if (!page?.envelope) return
  page.number = Math.min(page.number, Math.max(1, Math.ceil(total / page.limit)))
  listing.start = (page.number - 1) * page.limit
  listing.end = listing.start + page.limit
}

function parseListingQuery(query: URLSearchParams, limits: ListingLimits): ListingQuery {
  const budget = new FilterBudget(limits.maxFilters)
  const listing: ListingQuery = {
    filters: parseFilters(query, limits, budget),
    sort: parseSort(query, limits.maxSortKeys),
    relations: parseRelations(query, budget),
    start: 0,
    end: undefined,
  }
  const limit = wholeNumber(query, '_limit', 0)
  const page = wholeNumber(query, '_page', 1)
  const perPage = wholeNumber(query, '_per_page', 1)
  if (perPage !== undefined) {
    if (page === undefined) throw new HttpError(400, '_per_page needs _page (json-server 1.0 pages only when both are given): ask for _page=1&_per_page=N.')
    const other = ['_limit', '_start', '_end'].find((name) => query.has(name))
    if (other) throw new HttpError(400, `_per_page (json-server 1.0) pages by itself; drop ${other}, or page with _page and _limit (json-server 0.17).`)
  }
  if (page !== undefined || perPage !== undefined) {
    // `_page` counts from 1 and takes 10 per page unless `_limit` (0.17) or `_per_page` (1.0) says otherwise.
    const size = perPage ?? limit ?? 10
    if (size === 0) throw new HttpError(400, '_limit must be at least 1 with _page.')
    listing.page = { number: page ?? 1, limit: size, envelope: perPage !== undefined }
    listing.start = (listing.page.number - 1) * size
    listing.end = listing.start + size
    return listing
  }
  listing.start = wholeNumber(query, '_start', 0) ?? 0
  const end = wholeNumber(query, '_end', 0)
  listing.end = end ?? (limit === undefined ? undefined : listing.start + limit)
  return listing
}

/** A query parameter that must be a whole number of at least `min`; undefined when absent. */
function wholeNumber(query: URLSearchParams, name: string, min: number): number | undefined {
  const text = query.get(name)
  if (text === null) return undefined
  if (!/^\d{1,15}$/.test(text.trim()) || Number(text) < min) {
    throw new HttpError(400, `${name} must be a whole number${min > 0 ? ` from ${min}` : ''} (got ${JSON.stringify(text)}).`)
  }
  return Number(text)
}

function listingHeaders(context: Context, path: NodePath, listing: ListingQuery, total: number): Record<string, string> {
  const headers: Record<string, string> = { 'X-Total-Count': String(total) }
  if (listing.page) {
    const link = pageLinks(urlOf(context, path), context.query, listing.page, total)
    if (link) headers.Link = link
  }
  return headers
}

/**
 * The `Link` header of a paged answer (RFC 8288 §3): `first`, `prev`, `next`
 * and `last`, where they apply, as path URLs that repeat the query with
 * another `_page`. A collection that fits on one page has no links.
 */
function pageLinks(collectionUrl: string, query: URLSearchParams, page: { number: number; limit: number }, total: number): string | undefined {
  const lastPage = Math.max(1, Math.ceil(total / page.limit))
  if (lastPage === 1) return undefined
  const linkTo = (number: number, rel: string) => {
    const params = new URLSearchParams(query)
    params.set('_page', String(number))
    return `<${collectionUrl}?${params}>; rel="${rel}"`
  }
  const links = [linkTo(1, 'first')]
  if (page.number > 1) links.push(linkTo(Math.min(page.number - 1, lastPage), 'prev'))
  if (page.number < lastPage) links.push(linkTo(page.number + 1, 'next'))
  links.push(linkTo(lastPage, 'last'))
  return links.join(', ')
}
