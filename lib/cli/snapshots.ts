import { existsSync, statSync } from 'node:fs'
import { rename, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { Documents } from '../data/documents.ts'
import { databaseOf } from '../resources/json-server/database.ts'
import { UsageError } from './usage.ts'

/** The snapshots folder must be there before the server starts, as json-server requires it. */
export function checkSnapshotFolder(folder: string): void {
  if (!existsSync(folder) || !statSync(folder).isDirectory()) {
    throw new UsageError(`--snapshots ${folder}: there is no such folder; make it, or give a folder that exists.`)
  }
}

/**
 * `s` and Enter on the terminal write a snapshot of the data into `folder`, as json-server 0.17 does
 * (docs/json-server.md, "Snapshots"): `db-<Date.now()>.json`, the database as `GET /db` gives it,
 * indented by two spaces, so that `restdir db-….json` or `--import` takes it back. It is written
 * beside its name first and then renamed, so no half-written snapshot is ever there.
 */
export function snapshotOnEnter(documents: () => Documents | undefined, folder: string, quiet: boolean): void {
  const written = (line: string) => quiet || process.stdout.write(`${line}\n`)
  const failed = (error: Error) => process.stderr.write(`restdir: no snapshot written: ${error.message}\n`)
  process.stdin.on('error', () => process.stderr.write("restdir: the terminal's input cannot be read; s + Enter will write no snapshot.\n"))
  process.stdin.setEncoding('utf8')
  process.stdin.on('data', (chunk: string) => {
    for (const line of chunk.split('\n')) {
      if (line.trim().toLowerCase() === 's') writeSnapshot(documents(), folder).then(written, failed)
    }
  })
}

async function writeSnapshot(documents: Documents | undefined, folder: string): Promise<string> {
  if (!documents) throw new Error('the store is not open yet.')
  const file = path.join(folder, `db-${Date.now()}.json`)
  const text = JSON.stringify(await databaseOf(documents), null, 2)
  await writeFile(`${file}.partial`, text, { flag: 'wx' })
  await rename(`${file}.partial`, file)
  return `Saved snapshot to ${path.relative(process.cwd(), file) || file}`
}
