import type { Documents } from '../data/documents.ts'
import type { Doc, NodePath } from '../store/store.ts'
import type { StoreError } from '../store/errors.ts'
import type { Filter } from './filters.ts'
import { matchesFilters, namesDottedMember } from './match.ts'
import { joinRelations } from './relations.ts'
import { sortDocs } from './sort.ts'
import { Gate, pacer, type Pace } from '../data/pace.ts'
import type { ListingQuery } from './query.ts'
import { listingIndexes, NOT_INDEXED } from './indexes.ts'

/** What a listing answers: its JSON text, how many documents matched before the window, and the children left out. */
export interface Listing {
  text: string
  total: number
  /** Children left out because their document file is broken. */
  skipped: readonly StoreError[]
}

/**
 * The documents of a collection's children in ascending id order, narrowed
 * by the listing query: an array, or json-server 1.0's page envelope.
 * Undefined when the node does not exist.
 */
export async function selectListing(documents: Documents, path: NodePath, listing: ListingQuery): Promise<Listing | undefined> {
  if (!needsEveryDocument(listing) && !listing.page?.envelope) return plainWindow(documents, path, listing)
  // One budget for the request's work on the event loop, from filtering to the answer's text (docs/http-api.md, "Listing queries").
  const pace = pacer()
  const selection = needsEveryDocument(listing) ? await selectFromAll(documents, path, listing, pace) : await readWindow(documents, path, listing)
  if (!selection) return undefined
  const docsText = selection.texts ? await joinTexts(selection.texts, pace) : await documentsText(selection.docs, pace)
  const text = listing.page?.envelope ? pageEnvelopeText(listing.page, selection.total, docsText) : docsText
  return { text, total: selection.total, skipped: selection.skipped }
}

/** The listing of a collection that does not exist yet but is known to be one (such as `/user` before the first user). */
export function emptyListing(listing: ListingQuery): Listing {
  clampPage(listing, 0) // any page of nothing is page 1, as json-server 1.0 answers it
  return { text: JSON.stringify(listing.page?.envelope ? pageEnvelope(listing.page, 0, []) : []), total: 0, skipped: [] }
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

/** Texts of documents as a JSON array, joined a slice at a time. */
async function joinTexts(texts: readonly string[], pace: Pace): Promise<string> {
  const parts: string[] = []
  for (let start = 0; start < texts.length; start += JOIN_BATCH) {
    const part = texts.slice(start, start + JOIN_BATCH).join(',')
    parts.push(part)
    const turn = pace(part.length)
    if (turn) await turn
  }
  return `[${parts.join(',')}]`
}

const JOIN_BATCH = 256

/**
 * A window in id order (no filter, sort, relation or page envelope): the
 * documents' compact texts joined, which is the very text `JSON.stringify`
 * makes of the parsed documents, without parsing or serialising any of them.
 */
async function plainWindow(documents: Documents, path: NodePath, listing: ListingQuery): Promise<Listing | undefined> {
  const window = await documents.windowText(path, listing.start, listing.end)
  return window && { text: `[${window.texts.join(',')}]`, total: window.total, skipped: window.skipped }
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

interface Selection {
  docs: Doc[]
  /** The documents' compact texts, when the selection has them (then `docs` is empty). */
  texts?: string[]
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
 * them at once cannot crowd out the rest (docs/http-api.md, "Listing queries").
 */
const bigListings = new WeakMap<Documents, Gate>()

async function selectFromAll(documents: Documents, path: NodePath, listing: ListingQuery, pace: Pace): Promise<Selection | undefined> {
  const queried = await queryStore(documents, path, listing, pace)
  if (queried) return queried
  const select = async () => {
    const indexed = await selectFromIndex(documents, path, listing, pace)
    if (indexed !== NOT_INDEXED) return indexed
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
 * The selection from the collection's listing index (lib/listing/indexes.ts),
 * which answers as filtering and sorting every document does; NOT_INDEXED
 * for a query (or a store) it leaves to that.
 */
async function selectFromIndex(documents: Documents, path: NodePath, listing: ListingQuery, pace: Pace): Promise<Selection | undefined | typeof NOT_INDEXED> {
  // A store that answers queries itself (PostgreSQL) is shared by processes: what it leaves to the process is listed from every document.
  if (documents.listsItself) return NOT_INDEXED
  const windowOf = (total: number) => {
    clampPage(listing, total)
    return { start: listing.start, end: listing.end }
  }
  const answer = await listingIndexes(documents).answer(path, listing.filters, listing.sort, windowOf, pace)
  if (answer === undefined || answer === NOT_INDEXED) return answer
  if (listing.relations.length === 0) return { docs: [], texts: answer.texts, total: answer.total, skipped: answer.skipped }
  const docs = await joinRelations(documents, path, answer.texts.map((text) => JSON.parse(text) as Doc), listing.relations, pace)
  return { docs, total: answer.total, skipped: answer.skipped }
}

/**
 * The selection from a store that filters, sorts and pages itself (Store.query),
 * so that only the page's documents come into the process; undefined when it
 * has no such query, or leaves this one to the process.
 */
async function queryStore(documents: Documents, path: NodePath, listing: ListingQuery, pace: Pace): Promise<Selection | undefined> {
  if (!documents.listsItself) return undefined
  // A member whose name holds a dot: the store reads dotted paths (ListingCondition's field), so the process judges it.
  if (namesDottedMember(listing.filters)) return undefined
  const ask = () => documents.query(path, { filters: listing.filters, sort: listing.sort, start: listing.start, end: listing.end })
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
  return ((await documents.countDocuments(path)) ?? 0) > BIG_COLLECTION
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
 * size: json-server 1.0's page without filters or sorting, which needs no
 * other document.
 */
async function readWindow(documents: Documents, path: NodePath, listing: ListingQuery): Promise<Selection | undefined> {
  const selection = await windowTexts(documents, path, listing)
  if (!selection || !listing.page?.envelope || listing.start < selection.total) return selection
  // A 1.0 page past the last is the last page, as json-server answers it (of an empty collection, page 1).
  clampPage(listing, selection.total)
  return selection.total === 0 ? selection : windowTexts(documents, path, listing)
}

/** The window's documents as their compact texts, read as a plain page's are (Documents.windowText). */
async function windowTexts(documents: Documents, path: NodePath, listing: ListingQuery): Promise<Selection | undefined> {
  const window = await documents.windowText(path, listing.start, listing.end)
  return window && { docs: [], texts: window.texts, total: window.total, skipped: window.skipped }
}

/** json-server 1.0 answers a `_page` past the last with the last page; 0.17's `_page` answers `[]`. */
function clampPage(listing: ListingQuery, total: number): void {
  const page = listing.page
  if (!page?.envelope) return
  page.number = Math.min(page.number, Math.max(1, Math.ceil(total / page.limit)))
  listing.start = (page.number - 1) * page.limit
  listing.end = listing.start + page.limit
}
