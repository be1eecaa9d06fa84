import type { Documents } from '../data/documents.ts'
import type { LoggedChange } from '../data/changes.ts'
import type { Change } from '../data/documents.ts'
import type { NodePath } from '../store/store.ts'
import { joinPath as displayPath } from '../path.ts'
import { withoutPasswordHashes } from '../auth/password-hashes.ts'
import { CANNOT_TELL, type ChangeView, type Told } from './events.ts'

/*
 * What an event stream, or `?_changes`, tells a subscriber under `--auth`
 * (docs/accounts.md, "Event streams"): never a password hash, and behind an
 * owner's guard (`/600/messages`) only the changes of the documents the
 * subscriber may GET. A document that leaves the subscriber's reach (its
 * owner changed, or it was deleted) is told as a `delete` of its path with
 * `null`, and only to a subscriber that held it; a change the stream cannot
 * tell exactly ends the stream, so that the client comes back and is given
 * the value again.
 */

/** Every change as it is, less its password hashes; the stream ends at `endsAt` (a token's expiry), when given. */
export function openView(endsAt?: number): ChangeView {
  return { endsAt, prepare: async () => {}, canTell: () => true, begin: () => {}, value: withoutPasswordHashes, tell: stripped }
}

export interface OwnerViewOptions {
  documents: Documents
  /** The watched node: a collection, or one document of it. */
  path: NodePath
  /** The subscriber, the user a token names. */
  sub: string
  /** The field naming a document's owner (`userId`; in `users`, the id). */
  field: string
  /** The token's expiry, in milliseconds. */
  endsAt: number
}

/**
 * The changes of the documents the subscriber owns. Which documents it holds is
 * kept as the stream goes, from what it was told: a document it never held and
 * still does not own is passed over in silence. When resuming, what it held at
 * the id it comes back from is not known; a change it cannot be sure of then is
 * CANNOT_TELL, and the stream starts again from the value (`gap`).
 */
export function ownerView(options: OwnerViewOptions): ChangeView {
  const { documents, path, sub, field } = options
  /** Whether the subscriber holds each document (by its key); a document not here is `fallback`. */
  let held = new Map<string, boolean>()
  let fallback: boolean | undefined = false
  /** The documents owned when the view was prepared, and the id of the last change then. */
  let owned = new Set<string>()
  let preparedAt = 0
  let replaying = false

  const owns = (doc: unknown) => isObject(doc) && doc[field] !== undefined && doc[field] !== null && String(doc[field]) === sub
  const statusOf = (key: string) => (held.has(key) ? held.get(key) : fallback)
  /** From the prepared state on: every document's holding is what the store said. */
  const live = () => {
    held = new Map([...owned].map((key) => [key, true]))
    fallback = false
    replaying = false
  }

  /** The keys of the subscriber's documents at or below the watched node, as the store has them now. */
  const ownedNow = async () => {
    const found = new Set<string>()
    const [collection, id] = path
    const singular = id === undefined ? await documents.read([collection]) : undefined
    const names = id !== undefined ? [id] : singular ? [] : (await documents.documentNames([collection])) ?? []
    if (singular && owns(singular.doc)) found.add(keyOf([collection]))
    for (const name of names) {
      const stored = await documents.read([collection, name])
      if (stored && owns(stored.doc)) found.add(keyOf([collection, name]))
    }
    return found
  }

  const tell = (entry: LoggedChange): Told => {
    if (replaying && entry.id > preparedAt) live()
    const changed = entry.path
    if (changed.length === 0) return entry.type === 'delete' ? removal(entry) : CANNOT_TELL
    const key = keyOf(changed)
    const before = statusOf(key)
    // Below a document: told as the document is held.
    if (changed.length > 2) return before === undefined ? CANNOT_TELL : before ? stripped(entry) : undefined
    const data = (JSON.parse(entry.json) as { data: unknown }).data
    if (entry.type === 'delete') {
      held.set(key, false)
      if (owns(data)) return stripped(entry)
      if (changed.length === 1) {
        // A collection removed whole takes every document of it: told as the removal of its path.
        for (const other of [...held.keys()]) if (other.startsWith(key.slice(0, -1))) held.set(other, false)
        return removal(entry)
      }
      if (before === true) return removal(entry)
      // A deleted document names its owner: one that was another's was never the subscriber's.
      return before === undefined && data === null ? CANNOT_TELL : undefined
    }
    if (entry.type === 'put') {
      const mine = owns(data)
      held.set(key, mine)
      if (mine) return stripped(entry)
      return before === true ? removal(entry) : before === false ? undefined : CANNOT_TELL
    }
    // A merge patch names the owner only when it changes it.
    const names = isObject(data) && Object.hasOwn(data, field)
    if (before === undefined) return CANNOT_TELL
    if (!before) return names && owns(data) ? CANNOT_TELL : undefined // moved into reach: the subscriber lacks the rest of the document
    if (names && !owns(data)) {
      held.set(key, false)
      return removal(entry)
    }
    return stripped(entry)
  }

  return {
    endsAt: options.endsAt,
    async prepare(newest) {
      owned = await ownedNow()
      // A change made while the store was read may or may not be in what it said: up to here, changes decide by themselves.
      preparedAt = newest()
    },
    begin(resuming) {
      if (!resuming) return live()
      held = new Map()
      fallback = undefined
      replaying = true
    },
    canTell(entries) {
      const kept = { held, fallback, replaying }
      // As `begin(true)` would start, on a copy.
      held = new Map()
      fallback = undefined
      replaying = true
      try {
        return entries.every((entry) => tell(entry) !== CANNOT_TELL)
      } finally {
        ;({ held, fallback, replaying } = kept)
      }
    },
    value: withoutPasswordHashes,
    tell,
  }
}

/**
 * Whether a change ends the subscriber's token, as the next request with it would be refused
 * (docs/accounts.md, "Tokens"): its user deleted, or given a password the token was not issued for;
 * `collection` holds the accounts (`users`, or the declared families' users).
 */
export function tokenEndedBy(sub: string, issuedFor: (hash: unknown) => boolean, collection = 'users'): (change: Change) => boolean {
  return (change) => change.path.length === 2 && change.path[0] === collection && change.path[1] === sub
    && (change.type === 'delete' || (isObject(change.data) && Object.hasOwn(change.data, 'password') && !issuedFor(change.data.password)))
}

/** A document's key: its collection and id (a singular resource, its name alone). */
function keyOf(path: NodePath): string {
  return JSON.stringify(path.slice(0, 2))
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** The change less its password hashes (lib/auth/password-hashes.ts). */
function stripped(entry: LoggedChange): LoggedChange {
  const json = withoutPasswordHashes(entry.json)
  return json === entry.json ? entry : { ...entry, json }
}

/** The path's removal, and nothing of what it held. */
function removal(entry: LoggedChange): LoggedChange {
  return { id: entry.id, type: 'delete', path: entry.path, json: `{"path":${JSON.stringify(displayPath(entry.path))},"data":null}` }
}
