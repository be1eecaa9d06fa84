import * as assert from 'uvu/assert'
import { execFile } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { validate, compileErrors } from '@readme/openapi-parser'
import { root } from './process.ts'

const run = promisify(execFile)

/**
 * Asserts that an API description is valid OpenAPI (@readme/openapi-parser) and that `redocly lint`
 * finds no error in it; the description is written to `dir` for redocly to read.
 */
export async function assertLintedDescription(description: object, dir: string): Promise<void> {
  const result = await validate(structuredClone(description) as never)
  assert.ok(result.valid, compileErrors(result))
  const file = join(dir, 'openapi.json')
  await writeFile(file, JSON.stringify(description))
  const linted = await run(join(root, 'node_modules', '.bin', 'redocly'), ['lint', file, '--format', 'stylish'], { cwd: dir }).then(
    (done) => ({ ok: true, output: done.stdout + done.stderr }),
    (error: { stdout: string; stderr: string }) => ({ ok: false, output: error.stdout + error.stderr }),
  )
  assert.ok(linted.ok, linted.output)
  assert.not.match(linted.output, /\berror\b/)
}
