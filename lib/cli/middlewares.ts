import { existsSync } from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import type { Middleware } from '../middleware/middlewares.ts'
import { UsageError } from './usage.ts'

/**
 * The modules of `--middlewares FILE…` (docs/json-server.md, "Middlewares"), loaded in order as
 * json-server loads them, from the path as given: a CommonJS module's `module.exports`, or an ES
 * module's default export, is a middleware or an array of them (Express flattens arrays). A file
 * that is missing, fails to load or exports something else stops the start, naming it.
 */
export async function loadMiddlewares(files: readonly string[]): Promise<Middleware[]> {
  const loaded: Middleware[] = []
  for (const file of files) {
    const resolved = path.resolve(file)
    if (!existsSync(resolved)) throw new UsageError(`--middlewares ${file}: there is no such file.`)
    let module: { default?: unknown }
    try {
      module = await import(pathToFileURL(resolved).href)
    } catch (error) {
      throw new UsageError(`--middlewares ${file} could not be loaded: ${(error as Error).message ?? error}`)
    }
    const exported = [module.default].flat(Infinity)
    if (exported.length === 0 || exported.some((middleware) => typeof middleware !== 'function')) {
      throw new UsageError(`--middlewares ${file} exports ${describe(module.default)}; export a function (req, res, next): module.exports = (req, res, next) => { … } (CommonJS) or export default (ES module).`)
    }
    loaded.push(...(exported as Middleware[]))
  }
  return loaded
}

function describe(value: unknown): string {
  if (value === undefined) return 'no default'
  if (Array.isArray(value)) return 'an array holding something other than functions'
  if (value === null) return 'null'
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`
}
