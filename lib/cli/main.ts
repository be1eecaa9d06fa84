import { createServer, type RestdirServer } from '../server.ts'
import { packageVersion } from '../package.ts'
import { readCommandLine, serverOptions, switchOn, textOf, valueOf, type Flags } from './args.ts'
import { bannerText, exposureWarnings } from './banner.ts'
import { importAndExit } from './import-command.ts'
import { optionOf } from './options-table.ts'
import { loadDeclarations, type Family } from '../data/declarations.ts'
import { stopOnSignals } from './signals.ts'
import { chooseStore, checkPostgres, firstMissingFolder, JsonFileStore, removeEmptyFolders, type StoreChoice } from './store-choice.ts'
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
  const { flags, positionals } = readCommandLine(argv)
  if (switchOn(flags, 'help')) {
    process.stdout.write(usageText())
    process.exit(0)
  }
  if (switchOn(flags, 'version')) {
    process.stdout.write(`${packageVersion()}\n`)
    process.exit(0)
  }
  const store = chooseStore(flags, positionals, env)
  if (store.onPostgres) await checkPostgres(flags)
  const source = textOf(flags, 'import')
  if (switchOn(flags, 'force') && source === undefined) throw new UsageError('--force only goes with --import SOURCE.')
  if (source !== undefined) await importAndExit(source, store, switchOn(flags, 'force'), switchOn(flags, 'sync'), declaredFamilies(flags, env))
  await serve(flags, env, store)
}

/** The families of --resources, for --import; a declaration that cannot work is a usage error (exit 2). */
function declaredFamilies(flags: Flags, env: NodeJS.ProcessEnv): Family[] {
  try {
    return loadDeclarations(valueOf(flags, optionOf('resources'), env) as string | undefined)
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
}

async function serve(flags: Flags, env: NodeJS.ProcessEnv, store: StoreChoice): Promise<void> {
  const port = valueOf(flags, optionOf('port'), env) as number
  const host = valueOf(flags, optionOf('host'), env) as string
  const options = serverOptions(flags, env)
  // What this start makes of the store folder (looked at before opening it makes any), so that a failed start can take it away again.
  const madeStore = store.onPostgres || store.inMemory || store.jsonFile ? undefined : firstMissingFolder(store.location)
  let server: RestdirServer
  try {
    server = createServer({ ...options, store: store.inMemory ? undefined : store.location })
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
  const dbJson = server.handler.documents?.store
  const resources = dbJson instanceof JsonFileStore ? await dbJson.resources() : undefined
  server.listen(port, host, () => {
    const address = server.address()
    const actualPort = typeof address === 'object' && address ? address.port : port
    const { settings } = server.handler
    process.stdout.write(bannerText({
      version: packageVersion(),
      base: `http://${host.includes(':') ? `[${host}]` : host}:${actualPort}`,
      storeLabel: store.inMemory ? undefined : store.jsonFile ? `${store.label} (a db.json: every change is written back into it)` : store.label,
      sync: options.sync ?? false,
      fixture: options.fixture,
      readonly: options.readonly ?? false,
      prefix: settings.prefix,
      www: options.www,
      delay: textOf(flags, 'delay'),
      jsonServer: settings.jsonServer,
      token: options.token !== undefined,
      routes: server.handler.routes,
      resources,
    }))
    const warnings = exposureWarnings(host, settings.guards.cors, options.token, options.readonly ?? false)
    if (warnings) process.stderr.write(warnings)
  })
  stopOnSignals(server, options.quiet ?? false)
}
