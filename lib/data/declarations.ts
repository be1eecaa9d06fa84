/**
 * The declared resource families and their rules (docs/http-api.md, "Users and playlists"), in one place for the two that hold documents to them: the
 * HTTP resources (lib/resources/) and the importer (lib/data/import.ts).
 */
export interface Family {
  /** The collection's URL segment: `/user`, `/user/:user_id/playlist`. */
  collection: string
  /** The member's id field, assigned by the service and named in its route. */
  idField: string
  /** Fields that, when present, are non-empty strings unique within the collection. */
  unique: readonly string[]
  /** Fields that are always arrays, `[]` when left out. */
  arrays: readonly string[]
}

/** Users: `user_id` assigned, `username` unique among users. */
export const userFamily: Family = { collection: 'user', idField: 'user_id', unique: ['username'], arrays: [] }

/** A user's playlists: `playlist_id` assigned, `songs` always an array. */
export const playlistFamily: Family = { collection: 'playlist', idField: 'playlist_id', unique: [], arrays: ['songs'] }

/** Why a value cannot be held in a unique field, or undefined when it can. */
export function uniqueFieldProblem(field: string, value: unknown): string | undefined {
  if (typeof value !== 'string' || value.trim() === '') return `${field} must be a non-empty string`
  return undefined
}

/** Why a value cannot be held in an array field, or undefined when it can. */
export function arrayFieldProblem(field: string, value: unknown): string | undefined {
  if (Array.isArray(value)) return undefined
  const got = value === null ? 'null' : typeof value
  return `${field} must be an array (got ${got}); leave it out for an empty list`
}
