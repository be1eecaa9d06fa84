import type { Context } from '../context.ts'
import { urlOf } from '../context.ts'
import type { Documents } from '../data/documents.ts'
import type { Doc, NodePath } from '../store/store.ts'
import { sendJson } from '../http/respond.ts'
import { matchesFilters, parseFilters, type Filter, type ListingLimits } from './filters.ts'
import { parseSort, sortDocs, type SortKey } from './sort.ts'
import { Gate, pacer } from './pace.ts'
import { HttpError } from '../http/errors.ts'
import type { StoreError } from '../store/errors.ts'

/**
 * A listing query in json-server's dialect (README, "Listing queries"), so its clients work
 * unchanged: filters, full-text `q`, `_sort`/`_order`, and a window given by
 * `_start`/`_end`/`_limit` or `_page`/`_limit`. Other `_` parameters are ignored.
 */
export interface ListingQuery {
  filters: Filter[]
  sort: SortKey[]
  /** Documents [start, end) of the filtered, sorted list; end undefined means to the last. */
  start: number
  end: number | undefined
  /** Set for `_page` queries: they answer with a Link header. */
  page?: { number: number; limit: number }
}

/**
 * Answers GET on a collection: the documents of the node's children in
 * ascending id order, narrowed by the listing query, with `X-Total-Count`
 * (the count before the window) and, for `_page`, a `Link` header.
 * Returns false when the node does not exist.
 */
export async function sendCollection(context: Context, path: NodePath): Promise<boolean> {
  const listing = parseListingQuery(context.query, context.settings.listingLimits)
  const selection = needsEveryDocument(listing)
    ? await selectFromAll(context.documents, path, listing)
    : await readWindow(context.documents, path, listing.start, listing.end)
  if (!selection) return false
  const headers = listingHeaders(context, path, listing, selection.total)
  if (selection.skipped.length > 0) headers['X-Restdir-Skipped'] = reportSkipped(context, selection.skipped)
  sendJson(context, 200, selection.docs, headers)
  return true
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
  sendJson(context, 200, [], listingHeaders(context, path, listing, 0))
}

interface Selection {
  docs: Doc[]
  /** How many documents matched, before the window. */
  total: number
  /** Children left out because their document file is broken. */
  skipped: readonly StoreError[]
}

function needsEveryDocument(listing: ListingQuery): boolean {
  return listing.filters.length > 0 || listing.sort.length > 0
}

/** Collections bigger than this are filtered and sorted one at a time (see bigListings). */
const BIG_COLLECTION = 500

/**
 * Filtering and sorting a big collection yields to other requests every few
 * milliseconds; and big listings take turns, one at a time, so that many of
 * them at once cannot crowd out the rest (README, "Listing queries").
 */
const bigListings = new WeakMap<Documents, Gate>()

async function selectFromAll(documents: Documents, path: NodePath, listing: ListingQuery): Promise<Selection | undefined> {
  const select = async () => {
    const all = await documents.listing(path)
    if (!all) return undefined
    const matching = await sortDocs(await filterDocs(all.docs, listing.filters), listing.sort)
    return { docs: matching.slice(listing.start, listing.end), total: matching.length, skipped: all.skipped }
  }
  if (!(await isBig(documents, path))) return select()
  let gate = bigListings.get(documents)
  if (!gate) bigListings.set(documents, (gate = new Gate(1)))
  return gate.run(select)
}

/** Whether a collection holds more than BIG_COLLECTION children, asked without reading its documents. */
async function isBig(documents: Documents, path: NodePath): Promise<boolean> {
  const { store } = documents
  const count = store.documentChildren ? (await store.documentChildren(path, 0, 0))?.total : (await store.children(path))?.length
  return (count ?? 0) > BIG_COLLECTION
}

/** The documents that pass every filter, pausing for other requests on big collections. */
async function filterDocs(docs: Doc[], filters: readonly Filter[]): Promise<Doc[]> {
  if (filters.length === 0) return docs
  const pace = pacer()
  const kept: Doc[] = []
  for (const doc of docs) {
    if (matchesFilters(doc, filters)) kept.push(doc)
    const turn = pace()
    if (turn) await turn
  }
  return kept
}

/**
 * A window of a collection in its natural (id) order, with the collection's
 * size. Without filters or sorting this is all a page needs, so this is the
 * one place where a page can be read without reading every document.
 */
function readWindow(documents: Documents, path: NodePath, start: number, end: number | undefined): Promise<Selection | undefined> {
  return documents.window(path, start, end)
}

function parseListingQuery(query: URLSearchParams, limits: ListingLimits): ListingQuery {
  const listing: ListingQuery = { filters: parseFilters(query, limits), sort: parseSort(query, limits.maxSortKeys), start: 0, end: undefined }
  const limit = wholeNumber(query, '_limit', 0)
  const page = wholeNumber(query, '_page', 1)
  if (page !== undefined) {
    // `_page` counts from 1 and takes 10 per page unless `_limit` says otherwise (as json-server does).
    const perPage = limit ?? 10
    if (perPage === 0) throw new HttpError(400, '_limit must be at least 1 with _page.')
    listing.page = { number: page, limit: perPage }
    listing.start = (page - 1) * perPage
    listing.end = listing.start + perPage
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
