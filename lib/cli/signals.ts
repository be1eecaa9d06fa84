import type { RestdirServer } from '../server.ts'

/**
 * SIGINT (Ctrl+C) and SIGTERM stop accepting connections, let requests in flight
 * finish and exit 0 (docs/cli.md); a second signal meanwhile changes nothing.
 */
export function stopOnSignals(server: RestdirServer, quiet: boolean): void {
  let stopping = false
  const stop = (signal: string) => {
    if (stopping) return
    stopping = true
    if (!quiet) process.stdout.write(`\n${signal}: finishing in-flight requests…\n`)
    server.shutdown().then(
      () => process.exit(0),
      (error) => {
        process.stderr.write(`restdir: ${(error as Error).message}\n`)
        process.exit(1)
      },
    )
  }
  process.on('SIGINT', () => stop('SIGINT'))
  process.on('SIGTERM', () => stop('SIGTERM'))
}
