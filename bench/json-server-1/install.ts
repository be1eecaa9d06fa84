import { spawn } from 'node:child_process'
import { copyFile, mkdtemp, readFile, rename, rm } from 'node:fs/promises'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * json-server 1.0, which the bench and the dialect tests compare restdir
 * with, lives in this folder's own node_modules, not in the project's: it
 * asks for Node 22 (and runs on 20), so the project's `npm install` would
 * warn every newcomer about a package restdir never uses. It is installed
 * here, from this folder's package-lock.json, the first time it is needed
 * (docs/speed.md, "Running the bench").
 */
const folder = dirname(fileURLToPath(import.meta.url))

/** The folder of the installed json-server package (its package.json, lib/bin.js, …), installed first if missing. */
export async function jsonServer1Package(): Promise<string> {
  const wanted = await wantedVersion()
  const installed = join(folder, 'node_modules', 'json-server')
  if ((await installedVersion(installed)) === wanted) return installed
  process.stderr.write(
    `Installing json-server@${wanted} into ${relative(process.cwd(), folder) || '.'}/ (npm ci, on first use only): restdir is compared ` +
      'with it, which is all it is for, and it asks for Node 22 (it runs on 20), so it stays out of the project\'s own install.\n',
  )
  await install(installed, wanted)
  if ((await installedVersion(installed)) !== wanted) throw new Error(`npm ci in ${folder} did not install json-server@${wanted}`)
  return installed
}

async function wantedVersion(): Promise<string> {
  const manifest = JSON.parse(await readFile(join(folder, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }
  return manifest.dependencies['json-server']
}

async function installedVersion(packageFolder: string): Promise<string | undefined> {
  try {
    return (JSON.parse(await readFile(join(packageFolder, 'package.json'), 'utf8')) as { version: string }).version
  } catch {
    return undefined
  }
}

/**
 * `npm ci` in a folder of its own beside node_modules, whose node_modules is
 * then renamed into place: an install cut short leaves no half-filled
 * node_modules that looks installed, and of two runs installing at once the
 * second's rename finds the first's in place and leaves it.
 */
async function install(installed: string, wanted: string): Promise<void> {
  const staging = await mkdtemp(join(folder, '.installing-'))
  try {
    await copyFile(join(folder, 'package.json'), join(staging, 'package.json'))
    await copyFile(join(folder, 'package-lock.json'), join(staging, 'package-lock.json'))
    await npm(['ci', '--no-audit', '--no-fund', '--prefix', staging], staging)
    if ((await installedVersion(installed)) === wanted) return // another run's install finished first
    await rm(join(folder, 'node_modules'), { recursive: true, force: true })
    await rename(join(staging, 'node_modules'), join(folder, 'node_modules')).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST' && error.code !== 'EPERM') throw error
    })
  } finally {
    await rm(staging, { recursive: true, force: true })
  }
}

/** Runs npm (the one running this script when there is one), its output kept and shown only if it fails. */
function npm(args: string[], cwd: string): Promise<void> {
  const script = process.env.npm_execpath
  const [command, commandArgs] = script?.endsWith('.js') ? [process.execPath, [script, ...args]] : ['npm', args]
  return new Promise((resolve, reject) => {
    const child = spawn(command, commandArgs, { cwd, stdio: ['ignore', 'pipe', 'pipe'], shell: process.platform === 'win32' && command === 'npm' })
    let output = ''
    child.stdout.on('data', (chunk) => (output += chunk))
    child.stderr.on('data', (chunk) => (output += chunk))
    child.once('error', (error) => reject(new Error(`npm could not be started for json-server 1.0 in ${cwd}: ${error.message}`)))
    child.once('close', (code, signal) => {
      if (code === 0) resolve()
      else reject(new Error(`npm ${args.join(' ')} failed (${signal ?? `exit ${code}`}) installing json-server 1.0:\n${output}`))
    })
  })
}
