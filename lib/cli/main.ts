import { createServer, type RestdirServer } from '../server.ts'
import { packageVersion } from '../package.ts'
import { readCommandLine, serverOptions, switchOn, textOf, textsOf, valueOf, type Flags } from './args.ts'
import { loadMiddlewares } from './middlewares.ts'
import { bannerText, exposureWarnings } from './banner.ts'
import { optionOf } from './options-table.ts'
import { loadDeclarations, type Family } from '../data/declarations.ts'
import { stopOnSignals } from './signals.ts'
import { withConfigFile } from './config-file.ts'
import { checkSnapshotFolder, snapshotOnEnter } from './snapshots.ts'
import { chooseStaticFolders } from './www-choice.ts'
import { chooseStore, checkPostgres, firstMissingFolder, openStore, removeEmptyFolders, storeLabelOf, type Store, type StoreChoice } from './store-choice.ts'
import { existsSync } from 'node:fs'
import { UsageError, exitWithUsage, usageText } from './usage.ts'

/** The `restdir` command (docs/cli.md): a usage error anywhere before it listens is exit status 2, with the usage. */
export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<void> {
  try {
    await run(argv, env)
  } catch (error) {
    if (error instanceof UsageError) exitWithUsage(error.message)
    throw error
  }
}

async function run(argv: string[], env: NodeJS.ProcessEnv): Promise<void> {
  const commandLine = readCommandLine(argv)
  const { positionals } = commandLine
  if (switchOn(commandLine.flags, 'help')) {
    process.stdout.write(usageText())
    process.exit(0)
  }
  if (switchOn(commandLine.flags, 'version')) {
    process.stdout.write(`${packageVersion()}\n`)
    process.exit(0)
  }
  const { flags, file: configFile } = withConfigFile(commandLine.flags, process.cwd())
  const store = chooseStore(flags, positionals, env)
  if (store.onPostgres) await checkPostgres(flags)
  const source = textOf(flags, 'import')
  if (switchOn(flags, 'force') && source === undefined) throw new UsageError('--force only goes with --import SOURCE.')
  if (source !== undefined && store.loaded) throw new UsageError(`--import copies into a store; ${store.label} is loaded into memory, not a store to copy into.`)
  // The importer and the URL or module reader load only for a run that uses them (docs/speed.md, "Start-up").
  if (source !== undefined) await (await import('./import-command.ts')).importAndExit(source, store, switchOn(flags, 'force'), switchOn(flags, 'sync'), declaredFamilies(flags, env))
  await serve(flags, env, store, configFile, store.loaded ? await loadedStore(store, declaredFamilies(flags, env)) : undefined)
}

/** A URL's or a module's data in a memory store (docs/json-server.md, "A URL or a seed.js"); one that cannot be had exits 1, saying why. */
async function loadedStore(store: StoreChoice, families: Family[]): Promise<Store> {
  const memory = await openStore({ memory: true })
  const [{ loadSource, SourceError }, { ImportError, importDatabase }] = await Promise.all([import('./source.ts'), import('../data/import.ts')])
  try {
    await importDatabase(memory, await loadSource(store.loaded!, store.location, store.label), { families })
    return memory
  } catch (error) {
    if (!(error instanceof SourceError) && !(error instanceof ImportError)) throw error
    const message = error instanceof ImportError ? `${store.label} cannot be served:\n  ${error.problems.slice(0, 20).join('\n  ')}` : error.message
    process.stderr.write(`restdir: ${message}\n`)
    process.exit(1)
  }
}

/** The families of --resources, for --import; a declaration that cannot work is a usage error (exit 2). */
function declaredFamilies(flags: Flags, env: NodeJS.ProcessEnv): Family[] {
  try {
    return loadDeclarations(valueOf(flags, optionOf('resources'), env) as string | undefined)
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
}

async function serve(flags: Flags, env: NodeJS.ProcessEnv, store: StoreChoice, configFile: string | undefined, loaded: Store | undefined): Promise<void> {
  const port = valueOf(flags, optionOf('port'), env) as number
  const host = valueOf(flags, optionOf('host'), env) as string
  const options = { ...serverOptions(flags, env), middlewares: await loadMiddlewares(textsOf(flags, 'middlewares')) }
  const www = chooseStaticFolders(textsOf(flags, 'www'), process.cwd())
  options.www = www
  const snapshots = valueOf(flags, optionOf('snapshots'), env) as string
  checkSnapshotFolder(snapshots)
  // What this start makes of the store folder (looked at before opening it makes any), so that a failed start can take it away again.
  const madeStore = store.onPostgres || store.inMemory || store.jsonFile ? undefined : firstMissingFolder(store.location)
  const madeFile = store.jsonFile && !existsSync(store.location)
  let server: RestdirServer
  try {
    // A loaded source is json-server's data, served in its mode as a db.json is (docs/json-server.md, "A URL or a seed.js").
    server = loaded ? createServer({ ...options, store: loaded, jsonServer: options.jsonServer ?? true }) : createServer({ ...options, store: store.inMemory ? undefined : store.location })
  } catch (error) {
    throw new UsageError((error as Error).message) // an option out of range, e.g. a --cors entry that is not an origin
  }

  server.on('error', async (error: NodeJS.ErrnoException) => {
    if (error.code === 'EADDRINUSE') process.stderr.write(`restdir: port ${port} is in use; pick another with --port.\n`)
    else process.stderr.write(`restdir: ${error.message}\n`)
    // A failed start leaves nothing the next one trips over: the lock is released, a folder it made and left empty goes.
    await server.shutdown().catch(() => {})
    if (madeStore !== undefined) await removeEmptyFolders(store.location, madeStore)
    process.exit(1)
  })

  await server.ready.catch(() => new Promise(() => {})) // the 'error' listener reports it and exits
  // A db.json is its own declaration: the banner lists its resources, as json-server's does.
  const documents = server.handler.documents
  const resources = store.jsonFile && documents ? await documents.resources() : undefined
  server.listen(port, host, () => {
    const address = server.address()
    const actualPort = typeof address === 'object' && address ? address.port : port
    const { settings } = server.handler
    process.stdout.write(bannerText({
      version: packageVersion(),
      base: `http://${host.includes(':') ? `[${host}]` : host}:${actualPort}`,
      storeLabel: storeLabelOf(store, madeFile),
      sync: options.sync ?? false,
      fixture: options.fixture,
      readonly: options.readonly ?? false,
      prefix: settings.prefix,
      www,
      watch: switchOn(flags, 'watch'),
      configFile,
      snapshots,
      delay: textOf(flags, 'delay'),
      jsonServer: settings.jsonServer && settings.jsonServerVersion === '0.17',
      jsonServer1: settings.jsonServer && settings.jsonServerVersion === '1',
      token: options.token !== undefined,
      auth: settings.auth,
      routes: server.handler.routes,
      resources,
    }))
    const warnings = exposureWarnings(host, settings.guards.cors, options.token, options.readonly ?? false)
    if (warnings) process.stderr.write(warnings)
  })
  snapshotOnEnter(() => server.handler.documents, snapshots, options.quiet ?? false)
  stopOnSignals(server, options.quiet ?? false)
}
