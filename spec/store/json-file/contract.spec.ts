import { test } from 'uvu'
import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import { storeContract } from '../../../lib/store/contract.ts'
import { JsonFileStore } from '../../../lib/store/index.ts'
import { makeTempDir } from '../../support/helpers.ts'

// The Store contract (docs/library.md, "The Store interface") held on a db.json store: every tree the
// contract writes (the root's document, deep paths, any segment) has a place in the file.
for (const check of storeContract(async () => {
  const dir = await makeTempDir('restdir-json-file-')
  const store = await JsonFileStore.open(join(dir, 'db.json'), { log: () => {} })
  return { store, dispose: () => store.close().then(() => rm(dir, { recursive: true, force: true })) }
})) {
  test(`db.json: ${check.name}`, check.run)
}

test.run()
