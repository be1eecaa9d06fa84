import { loadDeclarations } from '../data/declarations.ts'
import { familyResources } from './family.ts'

/**
 * The seed's families as resources (docs/http-api.md, "Users and playlists"): users at
 * `/user/:user_id`, with `user_id` assigned and `username` unique among users, and
 * (lib/resources/playlists.ts) each user's playlists. A server builds its own from its
 * declarations (lib/handler.ts); these are the ones it builds when none are given.
 */
export const seedResources = familyResources(loadDeclarations(undefined))

export const users = seedResources[0]
