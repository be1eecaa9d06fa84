import type { Answer, Answering, Context } from '../http/context.ts'
import { urlOf } from '../http/context.ts'
import type { Doc, NodePath, StoredText } from '../store/store.ts'
import type { StoreError } from '../store/errors.ts'
import { documentAnswer, jsonAnswer, jsonTextAnswer } from '../http/respond.ts'
import { checkParameters } from '../listing/filters.ts'
import { joinRelations, parseRelations } from '../listing/relations.ts'
import { pacer } from '../data/pace.ts'
import { parseListingQuery, type ListingQuery } from '../listing/query.ts'
import { emptyListing, selectListing, type Listing } from '../listing/listing.ts'
import { withoutAbsentFields } from './json-server/query.ts'

/*
 * The answers of collections and documents with a listing query: what
 * lib/listing/ selects, sent with `X-Total-Count`, a `Link` header for pages,
 * and `X-Restdir-Skipped` for broken children.
 */

/**
 * Answers GET on a collection: the documents of the node's children in
 * ascending id order, narrowed by the listing query, with `X-Total-Count`
 * (the count before the window) and, for `_page`, a `Link` header.
 * Undefined when the node does not exist.
 */
export async function collectionAnswer(context: Context, path: NodePath): Promise<Answer | undefined> {
  let listing = parseListingQuery(context.query, context.settings.listingLimits, context.settings, isVersion1(context))
  let selected = await selectListing(context.documents, path, listing)
  if (!selected) return undefined
  // json-server 0.17 leaves out filters on fields no document has; asked only when nothing matched.
  const relaxed = selected.total === 0 && context.settings.jsonServer ? await withoutAbsentFields(context.documents, path, context.query) : undefined
  if (relaxed) {
    listing = parseListingQuery(relaxed, context.settings.listingLimits, context.settings, isVersion1(context))
    selected = (await selectListing(context.documents, path, listing)) ?? selected
  }
  return listingAnswer(context, path, listing, selected)
}

/** A collection that does not exist yet but is known to be one (such as `/user` before the first user): `[]`. */
export function emptyCollectionAnswer(context: Context, path: NodePath): Answer {
  const listing = parseListingQuery(context.query, context.settings.listingLimits, context.settings, isVersion1(context))
  return listingAnswer(context, path, listing, emptyListing(listing))
}

/** json-server 1.0's mode: its `_where` compares typed values (docs/json-server.md, "json-server 1.0's mode"). */
function isVersion1(context: Context): boolean {
  return context.settings.jsonServer && context.settings.jsonServerVersion === '1'
}

function listingAnswer(context: Context, path: NodePath, listing: ListingQuery, selected: Listing): Answer {
  const headers = listingHeaders(context, path, listing, selected.total)
  if (selected.skipped.length > 0) headers['X-Restdir-Skipped'] = reportSkipped(context, selected.skipped)
  if (context.settings.jsonServer) exposeAsJsonServer(context.query, headers)
  return jsonTextAnswer(context, 200, selected.text, headers)
}

/**
 * json-server 0.17 names the headers a page may read on a sliced or paged
 * listing, whether or not the request came with an `Origin`: `X-Total-Count`,
 * and `Link` beside `_page` (docs/json-server.md, "CORS in the mode").
 */
function exposeAsJsonServer(query: URLSearchParams, headers: Record<string, string>): void {
  if (!query.get('_end') && !query.get('_limit') && !query.get('_page')) return
  headers['Access-Control-Expose-Headers'] = query.get('_page') ? 'X-Total-Count, Link' : 'X-Total-Count'
}

/**
 * GET of one document: as stored, or with the relations its query asks for
 * (`/posts/1?_embed=comments`), which makes it more than the stored document,
 * so without an ETag. A `_` parameter restdir does not know is a 400 here too.
 */
export function storedDocumentAnswer(context: Context, path: NodePath, stored: StoredText): Answering {
  // Most GETs have no query: nothing to check or join, and nothing to wait for.
  if (context.query.size === 0) return documentAnswer(context, stored)
  return withRelations(context, path, stored)
}

async function withRelations(context: Context, path: NodePath, stored: StoredText): Promise<Answer> {
  checkParameters(context.query)
  const relations = parseRelations(context.query, undefined, context.settings, isVersion1(context))
  if (relations.length === 0) return documentAnswer(context, stored)
  const [joined] = await joinRelations(context.documents, path.slice(0, -1), [JSON.parse(stored.json) as Doc], relations, pacer())
  return jsonAnswer(context, 200, joined)
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

function listingHeaders(context: Context, path: NodePath, listing: ListingQuery, total: number): Record<string, string> {
  const headers: Record<string, string> = { 'X-Total-Count': String(total) }
  if (listing.page) {
    const link = pageLinks(originOf(context) + urlOf(context, path), context.query, listing.page, total)
    if (link) headers.Link = link
  }
  return headers
}

/**
 * The request's own origin (`http://localhost:3000`), from its scheme and Host
 * (RFC 9110 §4.2, §7.2), so that a page's links are absolute URLs: a front end
 * on another origin hands them straight to `fetch`, as json-server's allow.
 * A Host that is not a plain `name[:port]` leaves the links relative (RFC 3986 §4.2).
 */
function originOf(context: Context): string {
  const host = context.requestHeaders.host
  if (host === undefined || !/^(?:[a-z\d.-]+|\[[a-f\d:.]+\])(?::\d{1,5})?$/i.test(host)) return ''
  const scheme = context.connection.encrypted ? 'https' : 'http'
  return `${scheme}://${host}`
}

/**
 * The `Link` header of a paged answer (RFC 8288 §3): `first`, `prev`, `next`
 * and `last`, where they apply, as absolute URLs (see originOf) that repeat the
 * query with another `_page`. A collection that fits on one page has no links.
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
