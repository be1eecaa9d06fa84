import { existsSync, statSync } from 'node:fs'
import path from 'node:path'
import { UsageError } from './usage.ts'

/**
 * The static folders (docs/cli.md, `--www`): those given, each of which must be a folder, since
 * one that is not would leave its pages unserved without a word; else `./public` when it exists,
 * the folder json-server serves by default; else none here, and the library serves its bundled playground.
 */
export function chooseStaticFolders(given: readonly string[] | undefined, cwd: string): string[] | undefined {
  if (given === undefined || given.length === 0) {
    const publicFolder = path.join(cwd, 'public')
    return isFolder(publicFolder) ? [publicFolder] : undefined
  }
  for (const folder of given) {
    if (!isFolder(path.resolve(cwd, folder))) {
      throw new UsageError(`The static folder ${folder} (--static, --www) ${existsSync(path.resolve(cwd, folder)) ? 'is not a folder' : 'does not exist'}; give a folder of files to serve.`)
    }
  }
  return [...given]
}

function isFolder(location: string): boolean {
  return existsSync(location) && statSync(location).isDirectory()
}
