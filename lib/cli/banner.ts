import path from 'node:path'
import { isLoopbackHost, type GuardSettings } from '../http/guards.ts'

export interface BannerFacts {
  version: string
  /** `http://host:port`, the host in brackets when it is an IPv6 address. */
  base: string
  /** The store as the banner names it, or undefined when it is kept in memory. */
  storeLabel: string | undefined
  sync: boolean
  fixture: string | undefined
  readonly: boolean
  prefix: string
  /** The static folders, or undefined for the bundled playground. */
  www: string[] | undefined
  /** json-server's --watch was given (nothing to do: hand edits are always served). */
  watch: boolean
  /** The config file options were read from (--config, or ./json-server.json). */
  configFile: string | undefined
  /** The folder `s` and Enter write snapshots into (--snapshots). */
  snapshots: string
  /** --delay as given. */
  delay: string | undefined
  /** json-server 0.17's URL semantics (--json-server; on for a db.json). */
  jsonServer: boolean
  /** json-server 1.0's answers (--json-server 1). */
  jsonServer1?: boolean
  /** Writes need the token (--token or RESTDIR_TOKEN). */
  token: boolean
  /** Accounts and guards (--auth, docs/accounts.md). */
  auth?: boolean
  /** The declared routes, each pattern with its methods, as the router holds them. */
  routes: Array<{ pattern: string; methods: string[] }>
  /** A db.json's top-level names, in the file's order: its resources, as json-server's banner lists them. */
  resources?: readonly string[]
}

/** What the server prints once listening (docs/cli.md): where it is, its store and its routes. */
export function bannerText(facts: BannerFacts): string {
  const { prefix, fixture, readonly } = facts
  return `restdir ${facts.version} listening on ${facts.base}/\n` +
    `store: ${facts.storeLabel ?? 'in memory'}${facts.sync ? ' (fsync on every write)' : ''}\n` +
    (facts.configFile === undefined ? '' : `options from ${facts.configFile} (--config), the command line winning\n`) +
    (fixture === undefined ? '' : `fixture: ${path.resolve(fixture)}${readonly ? '' : ` (reset with POST ${prefix || '/'}?_reset)`}\n`) +
    (readonly ? `read-only (--readonly): every write is refused\n` : '') +
    (facts.token && !readonly && !facts.auth ? `every write needs "Authorization: Bearer <token>" (--token)\n` : '') +
    (facts.auth && facts.jsonServer ? `accounts (--auth): POST ${prefix}/register and POST ${prefix}/login answer a token; /600/..., /640/... and the other guards (in front of a URL or from --routes) let only their owner or signed-in users in; a URL without a guard stays open\n` : '') +
    (facts.auth && !facts.jsonServer ? `accounts (--auth): POST ${prefix}/user registers and POST ${prefix}/login answers a token; each user reads and writes their own subtree${facts.token ? ', the administrator (--token) everything' : ''}\n` : '') +
    (facts.jsonServer ? `json-server 0.17's URLs: nested routes, cascading deletes, integer ids, GET /db (--json-server; --no-json-server turns it off)\n` : '') +
    (facts.jsonServer1 ? `json-server 1.0's answers: pages in its envelope, DELETE answers the item, "error" in every problem (--json-server 1)\n` : '') +
    resourceLines(facts) +
    `routes:\n` +
    routeLines(facts) +
    (facts.delay ? `every data answer waits ${facts.delay} ms (--delay)\n` : '') +
    (facts.watch ? `hand edits to the store are always served: --watch is not needed\n` : '') +
    `Type s + Enter to write a snapshot of the data into ${path.resolve(facts.snapshots)}\n` +
    `Press Ctrl+C to stop.\n`
}

/** A db.json's resources, one URL a line, as json-server 0.17's banner lists them under "Resources". */
function resourceLines(facts: BannerFacts): string {
  if (facts.resources === undefined) return ''
  if (facts.resources.length === 0) return `resources: none yet (the file holds no collection or document)\n`
  return `resources:\n` + facts.resources.map((name) => `  ${facts.base}${facts.prefix}/${encodeURIComponent(name)}\n`).join('')
}

/**
 * One line a route: its methods in a column, then where. A read-only server lists
 * only what it answers: GET, and no route that has nothing else.
 */
function routeLines(facts: BannerFacts): string {
  const { prefix, www, fixture } = facts
  const routes: Array<[string[], string]> = [
    ...facts.routes.map(({ methods, pattern }): [string[], string] => [methods, `${prefix}${pattern}`]),
    [['GET'], `${prefix ? `any URL outside ${prefix}/: a file in` : '/  and any file in'} ${www ? www.map((folder) => path.resolve(folder)).join(', then ') : 'the bundled playground'}`],
    [['GET', 'POST', 'PUT', 'PATCH', 'DELETE'], `any other URL${prefix ? ` under ${prefix}/` : ''}: a JSON document`],
    [['GET'], `${prefix || '/'}?_openapi: the API description (OpenAPI 3.1)`],
  ]
  if (fixture !== undefined) routes.push([['POST'], `${prefix || '/'}?_reset: put the store back to the fixture`])
  return routes
    .map(([methods, where]): [string[], string] => [facts.readonly ? methods.filter((method) => method === 'GET') : methods, where])
    .filter(([methods]) => methods.length > 0)
    .map(([methods, where]) => `  ${methods.join(' ').padEnd(28)}${where}\n`)
    .join('')
}

/** Warnings for a server anyone can write to from elsewhere: another machine, or any web page. */
/** `cors` as the server reads it (its settings), so that every spelling of `*` counts. */
export function exposureWarnings(host: string, cors: GuardSettings['cors'], token: string | undefined, readonly: boolean): string {
  if (token !== undefined || readonly) return ''
  return (isLoopbackHost(host) ? '' : `restdir: warning: ${host} is reachable from other machines and anyone there can write; consider --token or --readonly.\n`) +
    (cors === '*' ? `restdir: warning: --cors '*' lets every web page you visit write to this server; consider a list of origins, --token or --readonly.\n` : '')
}
