/**
 * The lessons of the playground, as plain data: tracks of steps. Each step is
 * one request with an idea behind it:
 *
 *   id       names the step (progress is saved under it)
 *   title    the step's heading
 *   method, path, headers, body   the request; `{user_id}` and `{playlist_id}`
 *            in a path are holes that ids from earlier answers fill
 *   expect   the statuses that mark the step done
 *   explain  the idea, before the request
 *   outcome  what the answer shows
 *   note     optional: a hint for a step that may go otherwise
 *
 * A track's `needs` names the declared routes it teaches, as the server's API description
 * (`?_openapi`) writes them: a server that declares other families shows the track not.
 *
 * Text between backticks becomes code; between asterisks, emphasis.
 */
export const tracks = [
  {
    title: 'Users and playlists',
    needs: ['/user/{user_id}', '/user/{user_id}/playlist/{playlist_id}'],
    intro: 'A small music service: users, each with playlists. Follow the steps in order; each one uses what the one before created.',
    steps: [
      {
        id: 'create-user', title: 'Create a user', method: 'POST', path: '/user',
        body: { username: 'ada', name: 'Ada Lovelace' }, expect: [201],
        explain: 'POST adds a new item to a collection. You do not pick its id: the server does, and stores the user.',
        outcome: 'The answer carries a `Location` header with the new user\'s URL, and the user itself, now with a `user_id`. The playground remembers that id for the next steps.',
        note: 'Already have an `ada`? Usernames are unique, so a second one gets `409 Conflict`: change the username and send again.',
      },
      {
        id: 'read-user', title: 'Read it back', method: 'GET', path: '/user/{user_id}', expect: [200],
        explain: 'GET reads what lives at a URL. It is *safe*: it never changes anything, so send it as often as you like.',
        outcome: 'The answer is the user. Notice the `ETag` header: a version tag that changes whenever the user does.',
      },
      {
        id: 'replace-user', title: 'Replace it', method: 'PUT', path: '/user/{user_id}',
        body: { username: 'ada', name: 'Augusta Ada King', born: 1815 }, expect: [200],
        explain: 'PUT sends the *whole* new version of a resource. Fields you leave out are gone afterwards, so send everything you want to keep.',
        outcome: 'The answer is the user as now stored. PUT is *idempotent*: sending it twice leaves the same result as sending it once.',
      },
      {
        id: 'patch-user', title: 'Change one field', method: 'PATCH', path: '/user/{user_id}',
        body: { title: 'Countess of Lovelace' }, expect: [200],
        explain: 'PATCH sends only what changes, as a JSON Merge Patch: the fields you send are set, the others stay, and a field set to `null` is removed.',
        outcome: 'The answer is the merged user: `name` and `born` are still there, `title` is new.',
      },
      {
        id: 'create-playlist', title: 'Give it a playlist', method: 'POST', path: '/user/{user_id}/playlist',
        body: { name: 'Focus', songs: [{ title: 'Clair de Lune', artist: 'Claude Debussy' }, { title: 'Gymnopédie No. 1', artist: 'Erik Satie' }] },
        expect: [201],
        explain: 'Resources nest: a user\'s playlists live under the user\'s URL. POST to that collection to add one.',
        outcome: 'The answer is the playlist, with its own `playlist_id` and its owner\'s `user_id`. For a user that does not exist it would be `404`.',
      },
      {
        id: 'read-playlist', title: 'Read the playlist', method: 'GET', path: '/user/{user_id}/playlist/{playlist_id}', expect: [200],
        explain: 'Every playlist has a URL of its own, built from the ids the server handed out.',
        outcome: 'The answer is the playlist; its `songs` lists the songs in order.',
      },
      {
        id: 'list-playlists', title: 'List the user\'s playlists', method: 'GET', path: '/user/{user_id}/playlist', expect: [200],
        explain: 'GET on a collection lists its members as a JSON array.',
        outcome: 'An array holding the playlist. Lists can be sorted, filtered and paged: add `?_sort=name&_order=desc` to the path.',
      },
      {
        id: 'list-users', title: 'List all users', method: 'GET', path: '/user', expect: [200],
        explain: 'The same idea one level up: `/user` is the collection of all users.',
        outcome: 'An array of users. Filter with `/user?username=ada`, or page with `?_page=1&_limit=10` and look at the `X-Total-Count` and `Link` headers.',
      },
      {
        id: 'delete-user', title: 'Delete the user', method: 'DELETE', path: '/user/{user_id}', expect: [200],
        explain: 'DELETE removes what lives at a URL and everything below it: the user\'s playlists go too. Watch them leave the store tree.',
        outcome: 'The answer is the user that was deleted, for a last look.',
      },
      {
        id: 'user-gone', title: 'Check that it is gone', method: 'GET', path: '/user/{user_id}', expect: [404],
        explain: 'Ask for the deleted user again. An error is an answer too: restdir sends `application/problem+json`, whose `detail` says what went wrong.',
        outcome: 'The answer is a problem document. Error statuses are how HTTP says no; nothing is broken.',
      },
    ],
  },
  {
    title: 'Any URL is a document',
    intro: 'Outside the declared resources, every URL can hold a JSON document, with no setup: this is the fake back end for your front end.',
    steps: [
      {
        id: 'put-note', title: 'Store a note', method: 'PUT', path: '/notes/first',
        body: { text: 'Any URL can hold a JSON document.' }, expect: [201, 200],
        explain: 'PUT to a URL of your choosing stores a document right there. The folders on the way (`/notes`) appear by themselves.',
        outcome: 'The answer is the note, with an `id`: the last segment of its URL. `201` the first time, `200` when it replaces the note.',
      },
      {
        id: 'list-notes', title: 'List the folder', method: 'GET', path: '/notes', expect: [200],
        explain: '`/notes` has no document of its own, so GET answers with a *collection*: an array of the documents below it.',
        outcome: 'An array holding your note. A POST to `/notes` would add a note with a generated id.',
      },
      {
        id: 'stale-update', title: 'Guard against lost updates', method: 'PATCH', path: '/notes/first',
        headers: 'If-Match: "an-old-version"', body: { text: 'Edited' }, expect: [412],
        explain: 'Two people editing at once can overwrite each other\'s work. Send the `ETag` you last read in `If-Match`: the server only writes if the document has not changed since.',
        outcome: 'Nothing changes, because this made-up tag is not the current version. With the real `ETag` from your last answer the PATCH would give `200`.',
      },
    ],
  },
]

/** The ids the server hands out that later steps use, remembered from answers (bodies and Location headers). */
export const rememberedIds = ['user_id', 'playlist_id']

/** Steps of the seed's track that create or remove the user: under --auth, registering does the one, and the other would end the account. */
const ACCOUNT_STEPS = ['create-user', 'delete-user', 'user-gone']

/**
 * A seed track as the user who signed in follows it (docs/accounts.md, "The declared families"):
 * on their own user, `{me}`, every step sending the token. A track on no user (any URL is a
 * document: the administrator's, under --auth) has none: undefined.
 */
export function signedInTrack(track) {
  if (!track.needs?.some((route) => route.startsWith('/user/'))) return undefined
  return {
    ...track,
    intro: 'Your own user and playlists, as the one who signed in: every step sends your token.',
    steps: track.steps.filter((step) => !ACCOUNT_STEPS.includes(step.id)).map((step) => ({
      ...step,
      path: step.path.replace('{user_id}', '{me}'),
      headers: [step.headers, 'Authorization: Bearer {token}'].filter(Boolean).join('\n'),
    })),
  }
}
