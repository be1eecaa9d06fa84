import { writeFileSync } from 'node:fs'
import { queueLength } from '../../lib/store/fs/trusted-watch.ts'

/**
 * Overflows the kernel's queue of watch events while the server's loop is held (the server runs in
 * the test's process), then calls `then`, whose own changes find the queue full and go unheard.
 * The events: writes to `files` in turn (two alike in a row would be merged into one), more than
 * the queue holds (fs.inotify.max_queued_events). Both clocks the stores go by stand still from
 * the call until `then` is done, so no trust ends by time meanwhile: only the burst can end it.
 */
export async function withQueueOverflowed<T>(files: string[], then: () => Promise<T>): Promise<T> {
  const frozen = { performance: performance.now(), date: Date.now() }
  const realDateNow = Date.now
  performance.now = () => frozen.performance
  Date.now = () => frozen.date
  try {
    const events = queueLength() + 100
    for (let event = 0; event < events; event++) writeFileSync(files[event % files.length], String(event))
    return await then()
  } finally {
    delete (performance as { now?: unknown }).now
    Date.now = realDateNow
  }
}
