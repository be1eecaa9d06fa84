/**
 * The restdir schema in a PostgreSQL database (docs/postgres.md, "Running on PostgreSQL"): what it is, how a start makes it, and how it moves from an
 * older version. Everything that creates or alters a table is here.
 */

/**
 * Children in id order, as the other stores list them (compareIds in
 * lib/store/store.ts): whole numbers without leading zeros first, by value (a shorter
 * one is smaller), then every other name in code-unit order ("C" collation on
 * the mapped names). The index on the same expressions serves a page of it.
 */
const WHOLE_NUMBER = "name ~ '^(0|[1-9][0-9]*)$'"
export const ID_ORDER = `(NOT (${WHOLE_NUMBER})), (CASE WHEN ${WHOLE_NUMBER} THEN length(name) ELSE 0 END), name`

/** The schema version this restdir writes and reads. */
export const SCHEMA_VERSION = 2

/** The channel a commit's NOTIFY names, carrying only the change's id (docs/postgres.md, "Many instances on one database"). */
export const CHANGES_CHANNEL = 'restdir_changes'

/** The few parts of a `pg` connection the schema needs. */
interface SchemaClient {
  query(text: string, values?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>
}

/** A database whose restdir schema this restdir cannot use. */
export class SchemaError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'SchemaError'
  }
}

/** Version 1: the nodes, and the meta table that records the version. */
async function makeVersion1(client: SchemaClient): Promise<void> {
  await client.query(`CREATE TABLE restdir_meta (key text PRIMARY KEY, value text NOT NULL)`)
  await client.query(`INSERT INTO restdir_meta (key, value) VALUES ('schema_version', '1')`)
  await client.query(`CREATE TABLE restdir_nodes (
    parent text COLLATE "C" NOT NULL,
    name text COLLATE "C" NOT NULL,
    text text,
    PRIMARY KEY (parent, name))`)
  // The documents of one node in id order: pages and counts of a listing (documentChildren).
  await client.query(`CREATE INDEX restdir_documents ON restdir_nodes (parent, ${ID_ORDER}) WHERE text IS NOT NULL`)
}

/**
 * Version 1 to 2: the change feed. `restdir_changes` keeps the recent
 * changes, each written in the transaction of its change; `last_change_id`
 * numbers them. It starts from the time in microseconds, as a server without
 * the feed numbered its changes, so an id a client got before the move is
 * older than any after it.
 */
async function migrateToVersion2(client: SchemaClient): Promise<void> {
  await client.query(`CREATE TABLE restdir_changes (
    id bigint PRIMARY KEY,
    type text NOT NULL,
    path text NOT NULL,
    data text NOT NULL)`)
  await client.query(`INSERT INTO restdir_meta (key, value) VALUES ('last_change_id', $1)`, [String(Date.now() * 1000)])
  await client.query(`UPDATE restdir_meta SET value = '2' WHERE key = 'schema_version'`)
}

/** How each version below SCHEMA_VERSION moves to the next, in place. */
const MIGRATIONS: Record<string, (client: SchemaClient) => Promise<void>> = {
  '1': migrateToVersion2,
}

/**
 * The tables are made in the first schema of the connection's search_path that exists. When none
 * does (a `?options=-c search_path=name` whose schema was never made), PostgreSQL's own words are
 * `3F000: no schema has been selected to create in`: this says which schema and how to make it
 * (docs/postgres.md, "Choosing the store").
 */
async function requireSchemaToMakeIn(client: SchemaClient, location: string): Promise<void> {
  const { rows } = await client.query("SELECT current_schema() AS schema, current_setting('search_path') AS path, current_user AS role")
  if (rows[0].schema !== null) return
  const named = String(rows[0].path).split(',').map((name) => name.trim().replace(/^"(.*)"$/, '$1')).filter(Boolean)
  const first = named[0] === '$user' ? String(rows[0].role) : named[0]
  if (first === undefined) throw new SchemaError(`the database ${location} has an empty search_path, so restdir has no schema to make its tables in; name one in the URL (?options=-c%20search_path%3Dname).`)
  const identifier = /^[a-z_][a-z0-9_]*$/.test(first) ? first : `"${first.replaceAll('"', '""')}"`
  throw new SchemaError(
    `the database ${location} has no schema ${JSON.stringify(first)}, which its search_path (${String(rows[0].path)}) names for restdir's tables; ` +
      `make it (CREATE SCHEMA ${identifier};) or name one that exists.`,
  )
}

/**
 * Makes the schema on first start, or moves an older version to this one,
 * under an advisory lock so that servers starting at once do it once, in one
 * transaction, so a failed move leaves the old version whole. Refuses a
 * version this restdir does not know. Says what it did: 'made', 'migrated'
 * (from which version) or nothing.
 */
export async function ensureSchema(
  client: SchemaClient,
  location: string,
  log: (line: string) => void,
): Promise<{ made: boolean }> {
  const encoding = await client.query('SHOW server_encoding')
  if (encoding.rows[0].server_encoding !== 'UTF8') {
    throw new SchemaError(`the database ${location} is encoded ${String(encoding.rows[0].server_encoding)}; restdir needs a UTF8 database (CREATE DATABASE … ENCODING 'UTF8').`)
  }
  await client.query('BEGIN')
  try {
    await client.query("SELECT pg_advisory_xact_lock(hashtext('restdir schema'))")
    const { rows } = await client.query("SELECT to_regclass('restdir_meta') IS NOT NULL AS present")
    if (rows[0].present !== true) {
      await requireSchemaToMakeIn(client, location)
      await makeVersion1(client)
      await migrateToVersion2(client)
      await client.query('COMMIT')
      log(`restdir: made the restdir schema (version ${SCHEMA_VERSION}) in the database ${location}.`)
      return { made: true }
    }
    const found = await client.query(`SELECT value FROM restdir_meta WHERE key = 'schema_version'`)
    let version = found.rows[0]?.value as string | undefined
    const from = version
    while (version !== undefined && version !== String(SCHEMA_VERSION) && Object.hasOwn(MIGRATIONS, version)) {
      await MIGRATIONS[version](client)
      version = String(Number(version) + 1)
    }
    if (version !== String(SCHEMA_VERSION)) {
      throw new SchemaError(
        `the database ${location} holds restdir schema version ${from === undefined ? '(none recorded)' : JSON.stringify(from)}, ` +
          `which this restdir (schema version ${SCHEMA_VERSION}) does not know; use the restdir that made it, or another database.`,
      )
    }
    await client.query('COMMIT')
    if (from !== version) log(`restdir: moved the restdir schema in the database ${location} from version ${from} to ${SCHEMA_VERSION}.`)
    return { made: false }
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {})
    throw error
  }
}
