import { test } from 'uvu'
import { storeContract } from '../lib/store/contract.ts'
import { openTestStore } from './helpers.ts'

// The Store contract (README, "The Store interface"), exported as `restdir/store-contract`,
// held on the store of this pass: file, memory (waiting inside its writes, as a disk does) and PostgreSQL.
for (const check of storeContract(() => openTestStore())) test(check.name, check.run)

test.run()
