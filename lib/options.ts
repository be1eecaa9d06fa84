import path from 'node:path'
import type { Store } from './store/store.ts'
import { defaultBodyLimits, type BodyLimits } from './body.ts'
import { defaultPathLimits, type PathLimits } from './path.ts'
import { packageRoot } from './package.ts'

/** Options of `createHandler` and `createServer`; they mirror the command line. */
export interface RestdirOptions {
  /** A folder for a FileStore (default `./store`), or any Store. */
  store?: string | Store
  /** Folder of static files (default: the bundled playground). */
  www?: string
  /** URL prefix of the data API, e.g. `/api` (default: none, the API is at `/`). */
  prefix?: string
  /** fsync every write (file and directory) before answering. */
  sync?: boolean
  /** Largest request body in bytes (default 1 MiB). */
  maxBody?: number
  /** Deepest JSON nesting accepted in a body (default 64). */
  maxJsonDepth?: number
  /** Longest path, longest segment and most segments (defaults 8192, 1024, 32). */
  maxPathLength?: number
  maxSegmentLength?: number
  maxPathDepth?: number
  /** Milliseconds to wait before every data answer, to see a front end's loading states (default 0). */
  delay?: number
  /** No request log. */
  quiet?: boolean
  /** Where the request log goes (default: console.log). */
  log?: (line: string) => void
}

/** Options resolved to the values the server uses. */
export interface Settings {
  www: string
  prefix: string
  sync: boolean
  delay: number
  bodyLimits: BodyLimits
  pathLimits: PathLimits
  log?: (line: string) => void
}

export const bundledWww = path.join(packageRoot, 'www')

export function resolveSettings(options: RestdirOptions): Settings {
  return {
    www: path.resolve(options.www ?? bundledWww),
    prefix: normalizePrefix(options.prefix ?? ''),
    sync: options.sync ?? false,
    delay: options.delay ?? 0,
    bodyLimits: {
      maxBody: options.maxBody ?? defaultBodyLimits.maxBody,
      maxDepth: options.maxJsonDepth ?? defaultBodyLimits.maxDepth,
    },
    pathLimits: {
      maxPathLength: options.maxPathLength ?? defaultPathLimits.maxPathLength,
      maxSegmentLength: options.maxSegmentLength ?? defaultPathLimits.maxSegmentLength,
      maxDepth: options.maxPathDepth ?? defaultPathLimits.maxDepth,
    },
    log: options.quiet ? undefined : (options.log ?? ((line) => console.log(line))),
  }
}

/** `api`, `/api/` and `/api` all mean `/api`; `/` and `` mean no prefix. */
function normalizePrefix(prefix: string): string {
  const trimmed = prefix.replace(/^\/+|\/+$/g, '')
  return trimmed === '' ? '' : '/' + trimmed
}
