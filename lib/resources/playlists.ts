import { seedResources } from './users.ts'

/**
 * A user's playlists, as the seed declares them (docs/http-api.md, "Users and playlists"):
 * `{ "playlist_id": …, "user_id": <owner>, "songs": [ … ], …fields }` at
 * `/user/:user_id/playlist/:playlist_id`; `songs` is always an array.
 */
export const playlists = seedResources[1]
