import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * The package's own folder, found from this file: one level above `lib/` when
 * run from the TypeScript source, two above `dist/lib/` when built. The
 * bundled playground (`www/`) and `package.json` sit there in both layouts.
 */
export const packageRoot: string = findPackageRoot(path.dirname(fileURLToPath(import.meta.url)))

function findPackageRoot(libDir: string): string {
  const candidates = [path.resolve(libDir, '..'), path.resolve(libDir, '../..')]
  return candidates.find((dir) => existsSync(path.join(dir, 'package.json'))) ?? candidates[0]
}

/** The version in the package's package.json. */
export function packageVersion(): string {
  const packageJson = JSON.parse(readFileSync(path.join(packageRoot, 'package.json'), 'utf8')) as { version: string }
  return packageJson.version
}
