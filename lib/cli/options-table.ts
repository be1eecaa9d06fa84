import { optionDefaults, type RestdirOptions } from '../options.ts'

/**
 * The command line's options, each written once: its flag, what it takes, its default,
 * its help and where it lands in RestdirOptions. --help (usage.ts), the parsing (args.ts)
 * and the table of docs/cli.md (options-markdown.ts) all come from here; the order is
 * that of docs/cli.md.
 */

/** How a flag's text is read (values.ts); a `switch` takes none. */
export type ValueKind =
  | 'switch'
  | 'text'
  /** Text that must not be empty. */
  | 'secret'
  | 'port'
  | 'prefix'
  /** A whole number of at least 1. */
  | 'count'
  /** Bytes: `512kb`, `2mb`, … */
  | 'size'
  /** Bytes, at least one. */
  | 'positive-size'
  /** `500ms`, `10s`, `2m`; a bare number is milliseconds. */
  | 'duration'
  /** The milliseconds of `--delay`. */
  | 'delay'
  /** One file or more: the arguments after the flag up to the next flag (or a `.json` store), as json-server reads `-m a.js b.js`; the flag may come again. */
  | 'files'
  /** A switch that may name json-server's version, `--json-server 1`: the next argument only when it is a version number. */
  | 'version'

export interface CliOption {
  /** The flag without its dashes. */
  flag: string
  /**
   * Its one-letter form, the letter json-server 0.17 gives the same option where it has one
   * (`-p`, `-H`, `-d`, `-q`, `-s` for its `--static`, which is --www here); docs/cli.md, "Short flags".
   */
  short?: string
  /**
   * Its other long spellings, json-server 0.17's (`--static`, `--read-only`, `--ro`, `--nc`): each
   * is read as the flag, and suggested for a near miss (docs/json-server.md, "Its command line").
   */
  aliases?: string[]
  /** Each value given is kept, in order (`-s a -s b`), where another flag keeps its last one. */
  repeatable?: true
  /** What a text flag takes, for the message when its value is missing (values.ts says it for the other kinds). */
  takes?: string
  /** What the flag takes, as the usage names it (`N`, `SIZE`; `DIR|URL` for either). */
  placeholder?: string
  value: ValueKind
  /** Where the value goes; none for the command's own flags (the address to listen on, --import, --help). */
  lands?: keyof RestdirOptions
  /** The default of a flag that does not land in the library's options: the library's own (`optionDefaults`) otherwise. */
  commandDefault?: string | number
  /** An environment variable read when the flag is not given. */
  env?: string
  /** The usage lists `limits` apart, under a line that says how TIME is written. */
  section: 'options' | 'limits'
  /** --help's text, lines apart with `\n`; `{default}` and `{env}` are filled in. */
  usage: string
  /**
   * docs/cli.md: the meaning the option's row starts with, or `joinsRow` to share the row above,
   * and the default's cell when it is not `{default}` in backticks (`off` for a switch, empty without one).
   */
  docs: { meaning: string; default?: string } | { joinsRow: true; default?: string }
}

export const optionsTable: readonly CliOption[] = [
  { flag: 'port', short: 'p', placeholder: 'N', value: 'port', commandDefault: 3000, env: 'PORT', section: 'options',
    usage: 'port to listen on (default {default}, or {env}; 0 picks a free one)',
    docs: { meaning: 'port to listen on; `0` picks a free one', default: '`{default}`, or `{env}`' } },
  { flag: 'host', short: 'H', takes: 'an address, such as 127.0.0.1 or 0.0.0.0', placeholder: 'HOST', value: 'text', commandDefault: '127.0.0.1', section: 'options',
    usage: 'address to bind (default {default}; 0.0.0.0 exposes it)',
    docs: { meaning: 'address to bind' } },
  { flag: 'store', takes: 'a folder, a db.json or a postgres:// URL', placeholder: 'DIR|URL', value: 'text', lands: 'store', section: 'options',
    usage: 'data folder (default {default}), or a postgres:// URL (needs npm install pg);\nwhen not given: $RESTDIR_STORE, then a postgres:// $DATABASE_URL',
    docs: {
      meaning: 'the data folder, or a `postgres://` URL (see [Running on PostgreSQL](postgres.md))',
      default: '`$RESTDIR_STORE`, else a `postgres://` `$DATABASE_URL`, else `{default}`',
    } },
  { flag: 'www', short: 's', aliases: ['static'], repeatable: true, takes: 'a folder of static files', placeholder: 'DIR', value: 'text', lands: 'www', section: 'options',
    usage: 'folder of static files; again for more, the first that has a file\nanswers (default: ./public when it exists, else the bundled playground)',
    docs: {
      meaning: 'folder of static files, json-server\'s `--static`; given again, each folder in turn, the first that has the file answering (see [Static files](json-server.md#static-files)); a folder that does not exist stops the start',
      default: '`./public` when it exists, else the bundled playground',
    } },
  { flag: 'prefix', placeholder: 'PATH', value: 'prefix', lands: 'prefix', section: 'options',
    usage: 'serve the data API under PATH, e.g. /api; other URLs are static only',
    docs: { meaning: 'serve the data API under `PATH` (e.g. `/api`); every other URL is static only', default: 'none: the API is at `/`' } },
  { flag: 'sync', value: 'switch', lands: 'sync', section: 'options',
    usage: 'fsync every write before answering (survives power loss)',
    docs: {
      meaning: 'fsync each write (file and directory) before answering; the command then runs Node\'s thread pool with 32 threads (see [Speed](speed.md#how-restdir-keeps-its-cost-flat)); a store folder only (a usage error with a `postgres://` store)',
    } },
  { flag: 'max-body', placeholder: 'SIZE', value: 'size', lands: 'maxBody', section: 'options',
    usage: 'largest request body, e.g. 512kb, 2mb (default {default})',
    docs: { meaning: 'largest request body (`512kb`, `2mb`, …)' } },
  { flag: 'delay', short: 'd', placeholder: 'MS', value: 'delay', lands: 'delay', section: 'options',
    usage: 'wait MS milliseconds before every data answer (to see loading states)',
    docs: { meaning: 'wait `MS` milliseconds before every data answer, to see a front end\'s loading states' } },
  { flag: 'json-server', placeholder: '[VER]', value: 'version', lands: 'jsonServer', section: 'options',
    usage: 'json-server 0.17\'s URLs too: nested routes, cascading deletes, singular\nresources, integer ids, GET /db, _delay (default: on for a db.json store);\n--json-server 1 answers as json-server 1.0 does',
    docs: {
      meaning: 'json-server 0.17\'s URL semantics beside restdir\'s: nested routes, cascading deletes, singular resources, integer ids, `GET /db`, `_delay` (see [The json-server mode](json-server.md#the-json-server-mode)); `--json-server 1` answers as json-server 1.0 does (see [json-server 1.0\'s mode](json-server.md#json-server-10s-mode))',
      default: 'on for a `db.json` store, else off',
    } },
  { flag: 'no-json-server', value: 'switch', lands: 'jsonServer', section: 'options',
    usage: 'turn the json-server mode off, also for a db.json store',
    docs: { joinsRow: true } },
  { flag: 'routes', short: 'r', takes: 'a JSON file of rewrite rules, such as routes.json', placeholder: 'FILE', value: 'text', lands: 'routes', section: 'options',
    usage: 'json-server\'s rewrite rules from a JSON file, e.g. { "/api/*": "/$1" },\napplied before anything else answers',
    docs: { meaning: 'json-server\'s rewrite rules, a JSON object of pattern → target (`{ "/api/*": "/$1" }`), applied before anything else answers (see [Rewrite rules](json-server.md#rewrite-rules))', default: 'none' } },
  { flag: 'middlewares', short: 'm', takes: 'one or more middleware files, such as ./hello.js', placeholder: 'FILE', value: 'files', section: 'options',
    usage: 'one or more of your own (req, res, next) modules, CommonJS or ESM,\nrun in order before the data API; they have the server\'s rights',
    docs: { meaning: 'one or more of your own `(req, res, next)` modules (`-m a.js b.mjs`), CommonJS or ESM, run in order before the data API with `req.body` parsed, as json-server runs them (see [Middlewares](json-server.md#middlewares)); they run with the server\'s rights', default: 'none' } },
  { flag: 'id', short: 'i', takes: 'the field naming each item, such as _id', placeholder: 'FIELD', value: 'text', lands: 'idField', section: 'options',
    usage: 'the field naming each item, as json-server\'s --id (default {default})',
    docs: { meaning: 'the field naming each item of a collection, as json-server\'s `--id`: `/posts/1` is the post whose `_id` is 1 with `_id`, and `POST` gives the next `_id` (see [The json-server mode](json-server.md#the-json-server-mode))' } },
  { flag: 'foreignKeySuffix', aliases: ['fks'], takes: 'the text after a singular name in a foreign key, such as _id', placeholder: 'S', value: 'text', lands: 'foreignKeySuffix', section: 'options',
    usage: 'foreign keys end in S (default {default}); with _id: post_id, as json-server\'s\nforeign keys, in nested routes, _embed, _expand and cascades',
    docs: { meaning: 'what follows a collection\'s singular name in a foreign key (`S`), as json-server\'s `--foreignKeySuffix`: `_id` for `post_id`, in nested routes, `_embed`, `_expand` and cascading deletes (see [The json-server mode](json-server.md#the-json-server-mode))' } },
  { flag: 'import', takes: 'a store folder, a postgres:// URL or a db.json', placeholder: 'SOURCE', value: 'text', section: 'options',
    usage: 'copy a store folder, a postgres:// URL or a json-server db.json into\nthe store, then exit',
    docs: {
      meaning: 'copy a store folder, a `postgres://` database or a json-server `db.json` into the store, then exit (see [Moving a store](postgres.md#moving-a-store)); `0` when done, `1` when refused, `2` for a store into itself',
    } },
  { flag: 'force', value: 'switch', section: 'options',
    usage: 'with --import: merge into a store that holds documents, replacing\nthose at the same paths',
    docs: {
      meaning: 'with `--import`: merge into a store that holds documents, the source\'s replacing those at the same paths (a `db.json`: replace documents that exist already)',
      default: 'off',
    } },
  { flag: 'fixture', takes: 'a db.json or a store folder', placeholder: 'PATH', value: 'text', lands: 'fixture', section: 'options',
    usage: 'start from a db.json or a store folder; POST /?_reset puts it back\n(without --store, the store is kept in memory)',
    docs: {
      meaning: 'start from a json-server `db.json` or a store folder, and let `POST /?_reset` put the store back to it (see [Resetting between tests](http-api.md#resetting-between-tests)); when no store is chosen (no `--store`, `$RESTDIR_STORE` or `postgres://` `$DATABASE_URL`) the store is kept in memory',
      default: 'none: resets are off',
    } },
  { flag: 'resources', takes: 'a JSON file declaring resource families, or none', placeholder: 'FILE', value: 'text', lands: 'resources', section: 'options',
    usage: 'declare resource families from a JSON file, or none (default: users\nand their playlists; none for a db.json, whose keys are its resources)',
    docs: {
      meaning: 'the resource families to serve, declared in a JSON file (see [Declaring resources](http-api.md#declaring-resources)); `none` declares none, and every URL is a plain document',
      default: 'users and their playlists; none for a `db.json` store, whose top-level keys are its resources',
    } },
  { flag: 'cors', takes: "'*' or origins such as https://a.example,https://b.example", placeholder: 'LIST', value: 'text', lands: 'cors', section: 'options',
    usage: 'origins allowed besides localhost ones: \'*\' or https://a.example,https://b.example',
    docs: {
      meaning: 'origins allowed besides loopback ones: `\'*\'` (a warning when writes are then open to every page), or `https://a.example,https://b.example`',
      default: 'loopback origins',
    } },
  { flag: 'token', placeholder: 'SECRET', value: 'secret', lands: 'token', env: 'RESTDIR_TOKEN', section: 'options',
    usage: 'every write needs "Authorization: Bearer SECRET" (or set {env});\nwith --auth on a store, the administrator\'s key',
    docs: { meaning: 'every write needs `Authorization: Bearer SECRET`; with `--auth` on a store folder, memory or PostgreSQL, the administrator\'s key, which may do everything ([Accounts](accounts.md#the-declared-families))', default: '`{env}`, else none' } },
  { flag: 'auth', value: 'switch', lands: 'auth', section: 'options',
    usage: 'accounts on a db.json, as json-server-auth: POST /register and /login\nfor a token, guards such as /600/... (its users in the file\'s "users");\nelsewhere POST /user and /login, each user owning their subtree',
    docs: { meaning: 'accounts and access rules on a `db.json`, json-server-auth\'s flow made safe: `POST /register` and `/login` answer a token, URLs such as `/600/messages` or a routes file\'s `{ "messages": 600 }` let only their owner in (see [Accounts](accounts.md)); on a store folder, memory or PostgreSQL, the declared families: `POST /user` registers, `POST /login` logs in, and each user owns their subtree ([The declared families](accounts.md#the-declared-families))', default: 'off' } },
  { flag: 'auth-secret', takes: 'a key of 32 characters or more', placeholder: 'S', value: 'secret', lands: 'authSecret', env: 'RESTDIR_AUTH_SECRET', section: 'options',
    usage: 'the key that signs --auth\'s tokens, 32 characters or more (or set {env});\nelse the store\'s own, made at the first start (a file, or a PostgreSQL table)',
    docs: { meaning: 'the key that signs `--auth`\'s tokens, at least 32 characters; without it, a key made at the first start and kept beside the `db.json` (`.db.json.secret`, readable by its owner only), in a store folder (`@secret`), in the `restdir_secret` table of PostgreSQL, or in memory for the process', default: '`{env}`, else the store\'s own' } },
  { flag: 'readonly', aliases: ['read-only', 'ro'], value: 'switch', lands: 'readonly', section: 'options',
    usage: 'refuse every write (405; 403 in the json-server mode, as json-server)',
    docs: { meaning: 'refuse every write: `405`, or `403` in the json-server mode, as json-server\'s `--read-only` answers' } },
  { flag: 'no-cors', aliases: ['nc'], value: 'switch', lands: 'cors', section: 'options',
    usage: 'send no CORS headers at all; only the server\'s own pages may write',
    docs: { meaning: 'no CORS headers on any answer; a write or preflight from another origin is refused (`403`), the server\'s own pages may write', default: 'off' } },
  { flag: 'watch', short: 'w', value: 'switch', section: 'options',
    usage: 'accepted; not needed, as hand edits to the store are always served',
    docs: { meaning: 'accepted for json-server\'s `--watch`: restdir always serves what is in the store, hand edits to a `db.json` or a folder included, so nothing needs watching', default: 'off' } },
  { flag: 'no-gzip', aliases: ['ng'], value: 'switch', section: 'options',
    usage: 'accepted; restdir does not compress its answers',
    docs: { meaning: 'accepted for json-server\'s `--no-gzip`: restdir never compresses its answers (a proxy in front may)', default: 'off' } },
  { flag: 'snapshots', short: 'S', takes: 'a folder for snapshots', placeholder: 'DIR', value: 'text', commandDefault: '.', section: 'options',
    usage: 'where s + Enter writes a snapshot of the data, db-TIME.json (default {default})',
    docs: { meaning: 'the folder where typing `s` and Enter writes a snapshot of the data, `db-<milliseconds>.json`, as json-server does (see [Snapshots](json-server.md#snapshots)); a folder that does not exist stops the start' } },
  { flag: 'config', short: 'c', takes: 'a JSON file of options, such as json-server.json', placeholder: 'FILE', value: 'text', section: 'options',
    usage: 'read options from a JSON file, as json-server.json; the command line\nwins (default: ./json-server.json when it exists)',
    docs: { meaning: 'read options from a JSON file, as json-server reads `json-server.json`: `{ "port": 4000, "static": "./dist" }`, every flag by its long name; a flag on the command line wins (see [A config file](json-server.md#a-config-file))', default: '`./json-server.json` when it exists' } },
  { flag: 'max-path', placeholder: 'N', value: 'count', lands: 'maxPathLength', section: 'limits',
    usage: 'longest URL path in characters (default {default})',
    docs: { meaning: 'longest path, longest segment (characters), most segments' } },
  { flag: 'max-segment', placeholder: 'N', value: 'count', lands: 'maxSegmentLength', section: 'limits',
    usage: 'longest path segment in characters (default {default})',
    docs: { joinsRow: true } },
  { flag: 'max-depth', placeholder: 'N', value: 'count', lands: 'maxPathDepth', section: 'limits',
    usage: 'most path segments (default {default})',
    docs: { joinsRow: true } },
  { flag: 'max-json-depth', placeholder: 'N', value: 'count', lands: 'maxJsonDepth', section: 'limits',
    usage: 'deepest JSON nesting in a body (default {default})',
    docs: { meaning: 'deepest JSON nesting in a body' } },
  { flag: 'header-timeout', placeholder: 'TIME', value: 'duration', lands: 'headersTimeout', section: 'limits',
    usage: 'time to send the request headers (default {default})',
    docs: { meaning: 'time to send the headers, and the whole request (`500ms`, `10s`, `2m`; a bare number is milliseconds)' } },
  { flag: 'request-timeout', placeholder: 'TIME', value: 'duration', lands: 'requestTimeout', section: 'limits',
    usage: 'time to send the whole request, body included (default {default})',
    docs: { joinsRow: true } },
  { flag: 'max-streams', placeholder: 'N', value: 'count', lands: 'maxStreams', section: 'limits',
    usage: 'most event streams open at once (default {default})',
    docs: { meaning: 'most event streams open at once' } },
  { flag: 'max-sort-keys', placeholder: 'N', value: 'count', lands: 'maxSortKeys', section: 'limits',
    usage: 'most _sort fields in a listing query (default {default})',
    docs: { meaning: 'most `_sort` fields, and most filter values (`q` included), in one listing query (see [Listing queries](http-api.md#listing-queries))' } },
  { flag: 'max-filters', placeholder: 'N', value: 'count', lands: 'maxFilters', section: 'limits',
    usage: 'most filter values in a listing query, q included (default {default})',
    docs: { joinsRow: true } },
  { flag: 'change-window', placeholder: 'N', value: 'count', lands: 'changeWindow', section: 'limits',
    usage: 'changes kept for clients that resume (default {default})',
    docs: { meaning: 'changes kept for clients that resume (see [Live updates](http-api.md#live-updates))' } },
  { flag: 'change-window-size', placeholder: 'SIZE', value: 'positive-size', lands: 'changeWindowBytes', section: 'limits',
    usage: 'most memory those changes take (default {default})',
    docs: { joinsRow: true } },
  { flag: 'max-stream-buffer', placeholder: 'SIZE', value: 'positive-size', lands: 'maxStreamBuffer', section: 'limits',
    usage: 'unread bytes a stream may hold before it is closed (default {default}, or 4 x --max-body)',
    docs: { meaning: 'unread bytes an event stream may hold before it is closed', default: '`{default}`, or 4 × `--max-body`' } },
  { flag: 'quiet', short: 'q', value: 'switch', lands: 'quiet', section: 'options',
    usage: 'no request log',
    docs: { meaning: 'no request log' } },
  { flag: 'help', short: 'h', value: 'switch', section: 'options',
    usage: 'show this help',
    docs: { meaning: '' } },
  { flag: 'version', short: 'v', value: 'switch', section: 'options',
    usage: 'show the version',
    docs: { joinsRow: true } },
]

/** The option of `flag`; a flag missing from the table is a mistake in the code, not in the input. */
export function optionOf(flag: string): CliOption {
  const option = optionsTable.find((candidate) => candidate.flag === flag)
  if (!option) throw new Error(`no option --${flag} in the table`)
  return option
}

/** The value a flag has when not given: the command's own, or the library's default for where it lands. */
export function defaultOf(option: CliOption): string | number | boolean | undefined {
  if (option.commandDefault !== undefined) return option.commandDefault
  if (option.lands !== undefined && option.lands in optionDefaults) return optionDefaults[option.lands as keyof typeof optionDefaults]
  return undefined
}

/** The default as one would write it on the command line (`1mb`, `10s`), or undefined without one. */
export function shownDefault(option: CliOption): string | undefined {
  const value = defaultOf(option)
  if (value === undefined) return undefined
  if (option.value === 'size' || option.value === 'positive-size') return formatSize(value as number)
  if (option.value === 'duration') return formatDuration(value as number)
  return String(value)
}

/** Fills in `{default}` and `{env}` (as `$NAME`). */
export function fillIn(text: string, option: CliOption): string {
  return text.replaceAll('{default}', shownDefault(option) ?? '').replaceAll('{env}', option.env ? `$${option.env}` : '')
}

/** The option written as `--flag` or as its short form `-x`, or undefined when it is neither. */
export function optionWritten(written: string): CliOption | undefined {
  if (written.startsWith('--')) return optionNamed(written.slice(2))
  return optionsTable.find((option) => option.short !== undefined && `-${option.short}` === written)
}

/** The option whose long name, or one of its aliases, is `name` (`port`, `read-only`). */
export function optionNamed(name: string): CliOption | undefined {
  return optionsTable.find((option) => option.flag === name || option.aliases?.includes(name))
}

/** Every long name a flag may be written with: the flags and their aliases, for a near miss. */
export function longNames(): string[] {
  return optionsTable.flatMap((option) => [option.flag, ...(option.aliases ?? [])])
}

/** `-p, --port N` (or `--host HOST` without a short form), as the usage and docs/cli.md name it. */
export function flagsWithPlaceholder(option: CliOption): string {
  return option.short ? `-${option.short}, ${flagWithPlaceholder(option)}` : flagWithPlaceholder(option)
}

/** `--flag PLACEHOLDER`, as the usage names it. */
export function flagWithPlaceholder(option: CliOption): string {
  return option.placeholder ? `--${option.flag} ${option.placeholder}` : `--${option.flag}`
}

function formatSize(bytes: number): string {
  const units: Array<[string, number]> = [['gb', 1024 ** 3], ['mb', 1024 ** 2], ['kb', 1024]]
  const unit = units.find(([, size]) => bytes >= size && bytes % size === 0)
  return unit ? `${bytes / unit[1]}${unit[0]}` : String(bytes)
}

function formatDuration(milliseconds: number): string {
  if (milliseconds % 60_000 === 0) return `${milliseconds / 60_000}m`
  if (milliseconds % 1000 === 0) return `${milliseconds / 1000}s`
  return `${milliseconds}ms`
}
