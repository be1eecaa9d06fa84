/**
 * Storage behind the data API. A node is named by its decoded URL path
 * segments; it may hold a document (a JSON object) and may have children.
 * The file, memory and PostgreSQL stores implement this, and clients of
 * the HTTP API never see which one is used.
 *
 * A store carries its own guarantees (docs/http-api.md, "Versions and conditional requests"): each write and removal is atomic, and what a write may require
 * of the present (a version, an owner, a unique field) is checked in the same
 * atomic step as the write, however many processes share the store. The data
 * layer above (lib/data/documents.ts) holds no lock of its own.
 *
 * The optional methods (`?`) are filled in once, by lib/store/full-store.ts,
 * for every store the data layer takes: a store leaves out what it cannot do
 * better than the fallback there.
 */

/** Decoded URL path segments naming a node, root first. `[]` is the root. */
export type NodePath = readonly string[]

/** A JSON object. */
export type Doc = { [key: string]: unknown }

export interface StoredDoc {
  doc: Doc
  /** A strong ETag (quoted) that changes whenever the document changes. */
  etag: string
}

/** A document as it is answered: compact JSON text, as `JSON.stringify(doc)` gives it. */
export interface StoredText {
  json: string
  etag: string
  /**
   * Present (null at first) when the store hands out this very object for as
   * long as it keeps this version, as the file store's cache does: whoever
   * sends `json` may keep here the bytes it made of it, for the next answer.
   */
  sent?: SentText | null
}

/** The bytes made of a StoredText's `json` for an answer, in one form (compact, indented…): another form makes its own. */
export interface SentText {
  form: string
  bytes: Buffer
  /** `bytes.length` as a header value. */
  length: string
}

export interface WriteResult {
  /** True when the node had no document before this write. */
  created: boolean
  etag: string
}

/**
 * What a write requires of the present, checked atomically with the write: a
 * failed requirement throws a StoreError (kind in brackets) and stores nothing.
 */
export interface WriteConditions {
  /**
   * Compare-and-set: the ETag the node's document must still have, or `null`
   * for "the node must hold no document" ['version-changed'].
   */
  expect?: string | null
  /**
   * A node that must hold a document when this write lands ['owner-missing'],
   * such as the user a playlist is written under. A removal of the owner's
   * subtree and this write are ordered: either the write lands first and goes
   * with the subtree, or it is refused.
   */
  owner?: NodePath
  /**
   * No other document among the children of `among` may hold the same value
   * of `field` (compared as JSON text) ['taken', `reason` naming the holder].
   * Usernames are kept unique with it.
   */
  unique?: { among: NodePath; field: string }
  /**
   * How the change feed reports this write: as this merge patch (a `patch`
   * change) instead of a `put` of the whole document.
   */
  patch?: unknown
}

/** One step of a batch (Store.batch): a write as `write` makes it (`expect: null` for a create), or a removal as `remove` makes it. */
export type BatchOp =
  | { kind: 'write'; path: NodePath; doc: Doc; conditions?: WriteConditions }
  | { kind: 'remove'; path: NodePath; expect?: string | null }

/** The reads of a store a batch is checked against. */
export type BaseReader = Pick<Store, 'read' | 'children' | 'exists' | 'documentChildren'>

/** What a staged view of a store (lib/store/staged.ts) made of a batch, for Store.batch. */
export interface StagedBatch {
  /** Its ops: the very array Store.batch is given. */
  readonly ops: readonly BatchOp[]
  /** The changes its ops make, as the change feed will report them. */
  readonly changes: readonly Omit<StoreChange, 'id'>[]
  /**
   * Asks `base` (the store, inside the batch's atomic step) every question
   * the view asked of the store while staging (a document's version, whether
   * a node exists, a node's children); throws StoreError 'version-changed'
   * when an answer is not the one the view had.
   */
  confirm(base: BaseReader): Promise<void>
}

/** A change to the store, as the change feed (`subscribe`) reports it. */
export interface StoreChange {
  /**
   * Orders every change of the store: one more than the change before. Ids
   * keep growing across restarts, so an id from an earlier run is older than
   * any of the present one.
   */
  id: number
  type: 'put' | 'patch' | 'delete'
  path: NodePath
  /** put: the stored document; patch: the merge patch applied; delete: the removed document or null. */
  data: unknown
}

export interface Store {
  /**
   * Optional, for a store many processes share (PostgreSQL): the secret that signs its tokens, the
   * one stored, or `candidate` stored first when there is none, so every process signs alike
   * (docs/accounts.md, "The declared families").
   */
  sharedSecret?(candidate: string): Promise<string>
  /** The node's document, or undefined when it has none. */
  read(path: NodePath): Promise<StoredDoc | undefined>
  /**
   * Optional, for reads that send a document as it is: the node's document as
   * compact JSON text (exactly `JSON.stringify` of what `read` gives), or
   * undefined when it has none. A store that keeps the text at hand saves the
   * parse and the serialisation; without it, the data layer does both.
   */
  readText?(path: NodePath): Promise<StoredText | undefined>
  /**
   * Optional, with readText: the same answer, given at once (not a promise)
   * when the store can tell without waiting, as for a document it keeps in
   * memory and has just checked is still the one stored; else readText's
   * promise. Throws what readText would reject with.
   */
  readTextNow?(path: NodePath): StoredText | undefined | Promise<StoredText | undefined>
  /**
   * Optional, with readText: the compact texts of the documents of `names`, children of `path`,
   * in that order, when the store can give every one from memory, known to be the one stored (a
   * page read again and again); undefined when it cannot, at once or when the promise settles: the
   * caller then reads them one by one.
   */
  textsFromMemory?(path: NodePath, names: readonly string[]): Promise<string[] | undefined> | undefined
  /**
   * Set by a store whose children keep the order of its file (a json-server
   * db.json: its arrays' order, new items last): `children` and
   * `documentChildren` list them in that order rather than in id order, and
   * listings follow it (docs/json-server.md, "Serving a db.json").
   */
  readonly fileOrder?: boolean
  /**
   * Set by a json-server db.json store only: the file's top-level resources, collections and
   * documents, in the file's order (what json-server's banner and `GET /db` list). The data layer
   * tells a db.json by this, not by its class, which loads only when a run serves a db.json
   * (docs/speed.md, "Start-up").
   */
  resources?(): Promise<string[]>
  /**
   * Names of the node's children (decoded segments) in id order (see
   * `compareIds`; with `fileOrder`, the file's), or undefined when the node does not exist. A child counts when it
   * has a document or children of its own.
   */
  children(path: NodePath): Promise<string[] | undefined>
  /**
   * Optional, for listing big collections: of the node's children that hold a
   * document (what `children` gives, less those that only have children of
   * their own), in id order, the names at positions [start, end) and
   * how many there are in all, without reading any document; undefined when
   * the node does not exist. Without it, a listing reads every child.
   */
  documentChildren?(path: NodePath, start: number, end: number | undefined): Promise<{ names: string[]; total: number } | undefined>
  /**
   * Optional, for a store whose documents a person may change behind its
   * back (the file store's folder), so that a listing index can tell which
   * documents changed without reading them (docs/http-api.md, "Listing
   * queries"): for each named child of the node, a token that changes
   * whenever its document does (undefined when it holds none). A store
   * without it reports every change in its feed (`subscribe`, or the data
   * layer's own), and a listing index trusts the feed alone.
   */
  documentVersions?(path: NodePath, names: readonly string[]): (string | undefined)[]
  /** True when the node has a document or children. */
  exists(path: NodePath): Promise<boolean>
  /**
   * Creates or replaces the node's document, creating ancestors as needed,
   * when `conditions` hold (see WriteConditions). Atomic: a reader sees the
   * old document or the new one, never a mix, and two writes to one node
   * never interleave.
   */
  write(path: NodePath, doc: Doc, conditions?: WriteConditions): Promise<WriteResult>
  /**
   * Writes only when the node has no document; returns undefined (and writes
   * nothing) otherwise. `conditions.owner` and `conditions.unique` apply as
   * for `write`.
   */
  create(path: NodePath, doc: Doc, conditions?: Omit<WriteConditions, 'expect' | 'patch'>): Promise<WriteResult | undefined>
  /**
   * Removes the node's document and every node below it, in one atomic step,
   * then prunes ancestors left with neither document nor children. `existed`
   * is false when there was nothing to remove. With `expect`, removes only
   * when the node's document still has that ETag (`null`: holds no document)
   * ['version-changed']. Writes to nodes outside the subtree go on meanwhile.
   */
  remove(path: NodePath, conditions?: { expect?: string | null }): Promise<{ existed: boolean; doc?: Doc }>
  /**
   * Optional: applies `ops` in order as one atomic step (docs/http-api.md,
   * "Batches"): each op's conditions are checked against the store as the
   * ops before it left it, and when one fails (a StoreError, as for a write
   * alone) nothing of the batch is stored. A reader sees the store before the
   * batch or after it, never between; the change feed reports the batch's
   * changes, in order, once all of them are stored. A remove of a node that
   * holds nothing changes nothing and reports no change.
   *
   * `staged`, when given, is the staged view (lib/store/staged.ts) that made
   * these very ops: its changes are the ones to report, and once its
   * `confirm` passes against the store inside the batch's atomic step, every
   * op's conditions hold as they did in the view, and need no second check
   * (batchPlan). A store may ignore it and check each op itself.
   */
  batch?(ops: readonly BatchOp[], staged?: StagedBatch): Promise<void>
  /**
   * Optional: the feed of every change made to the store, whoever made it
   * (another process on the same database included), in id order. Returns
   * the function that stops listening. A store shared by several processes
   * must have it; without it, the data layer reports the changes made
   * through it and numbers them itself.
   */
  subscribe?(listener: (change: StoreChange) => void): () => void
  /** Optional, with `subscribe`: the id of the newest change so far. */
  lastChangeId?(): Promise<number>
  /**
   * Optional, with `subscribe`: the changes the store still keeps after `id`,
   * oldest first, at most `limit`; undefined when some change after `id` is
   * no longer kept. A process that started later answers a client that
   * comes back with an older id from here (docs/http-api.md, "Live updates").
   */
  changesAfter?(id: number, limit: number): Promise<StoreChange[] | undefined>
  /** Releases what the store holds (for the file store: its lock). */
  close(): Promise<void>
  /**
   * Optional, for listing queries on big collections (docs/http-api.md, "Listing queries"): the window of the node's children's documents that pass the
   * plan's filters, in its sort order (ties in id order), as their stored
   * text, and how many pass in all, without bringing the others into the
   * process. The answer must be exactly the one the listing module gives from
   * every document; undefined, for a plan or documents the store cannot answer
   * that way, or a node that does not exist, leaves the listing to the process.
   */
  query?(path: NodePath, plan: ListingPlan): Promise<ListingPage | undefined>
}

/**
 * A listing query as `query` takes it: conditions as the listing module
 * parses them (lib/listing/filters.ts: `field`, `values`, or `branches` of an
 * `or`), sort keys, and the window [start, end) of the sorted matches.
 */
export interface ListingPlan {
  filters: readonly ListingCondition[]
  sort: readonly { field: string; descending: boolean }[]
  start: number
  end: number | undefined
}

/** One condition of a ListingPlan; a store answers undefined for an operator it does not know. */
export interface ListingCondition {
  operator: string
  field?: string
  values?: readonly string[]
  branches?: readonly (readonly ListingCondition[])[]
  /** Operator `typed` (json-server 1.0's comparisons, lib/listing/typed.ts): its test, and its JSON operands ({ text } an array's or object's String()). */
  comparison?: string
  operands?: readonly (string | number | boolean | null | { readonly text: string })[]
}

export interface ListingPage {
  /** The window's documents as stored (JSON text), in order. */
  texts: string[]
  /** How many documents pass the filters, before the window. */
  total: number
}

/** A canonical whole number: no sign, no leading zero (so `7`, never `07` or `+7`); most names fail at the first character. */
function isWholeNumber(name: string): boolean {
  const first = name.charCodeAt(0)
  if (first === 48) return name.length === 1
  if (!(first > 48 && first <= 57)) return false
  for (let index = 1; index < name.length; index++) {
    const code = name.charCodeAt(index)
    if (code < 48 || code > 57) return false
  }
  return true
}

/**
 * The order of a collection (docs/http-api.md, "The generic data API"): names that are
 * whole numbers (`2`, `10`, as json-server's numeric ids) first, by value;
 * then every other name by UTF-16 code unit. Generated ids start with `0` and
 * are never whole numbers, so they keep their creation order.
 */
export function compareIds(a: string, b: string): number {
  const aNumber = isWholeNumber(a)
  const bNumber = isWholeNumber(b)
  if (aNumber !== bNumber) return aNumber ? -1 : 1
  // Without leading zeros, a shorter whole number is a smaller one, however many digits.
  if (aNumber && a.length !== b.length) return a.length - b.length
  return a < b ? -1 : a > b ? 1 : 0
}

/** The first position in `names`, sorted by compareIds, at which `name` could be inserted (a binary search). */
export function idInsertionPoint(names: readonly string[], name: string): number {
  let low = 0
  let high = names.length
  while (low < high) {
    const middle = (low + high) >>> 1
    if (compareIds(names[middle], name) < 0) low = middle + 1
    else high = middle
  }
  return low
}
