import { readFileSync, statfsSync } from 'node:fs'

/*
 * What lets a store answer from what its watch has heard instead of a stat (docs/storage.md, "When a
 * GET trusts memory"; docs/json-server.md, "Editing by hand while it runs"). On Linux every change
 * of a folder's entries, and every write to a file in it, queues an inotify event inside the very
 * system call that makes it, so by the time a client that changed a file sends its next request,
 * the event is waiting in the kernel. Node reads the events and the request in the poll phase of
 * its loop; a decision made in the check phase after it (CheckPhase) has had every event delivered
 * with its request applied. That holds on a file system whose every change this kernel makes
 * (isLocal), while the kernel's event queue has not overflowed (libuv drops the overflow event
 * itself: a burst of events past a quarter of the queue, EventBurst, is taken for one).
 */

/*
 * File systems whose every change is made by this kernel (linux/magic.h): ext2/3/4, XFS, Btrfs,
 * tmpfs, F2FS, ZFS. A bind mount of one of them into a container is the same inodes, and raises
 * the same events. Anything else, NFS, SMB, FUSE, 9p, virtiofs (a folder shared into a virtual
 * machine, as Docker Desktop does), overlayfs, is not trusted.
 */
const LOCAL_FILE_SYSTEMS = new Set([0xef53, 0x58465342, 0x9123683e, 0x01021994, 0xf2f52010, 0x2fc12fc1])

/** Whether a watch on `directory` hears every change in it in time: on Linux, on a file system whose changes this kernel makes (LOCAL_FILE_SYSTEMS). */
export function watchHearsAll(directory: string): boolean {
  return process.platform === 'linux' && isLocal(directory)
}

/** Whether `directory` is on a file system whose changes this kernel makes (LOCAL_FILE_SYSTEMS). */
export function isLocal(directory: string): boolean {
  try {
    return LOCAL_FILE_SYSTEMS.has(statfsSync(directory).type)
  } catch {
    return false
  }
}

/**
 * A watch's events counted turn by turn: so many in one turn of the loop (a quarter of the kernel's
 * queue) may mean the queue overflowed and events were dropped. A look at the files made after
 * such an event sees every change whose event was dropped before it; the queue may overflow again
 * while the same turn reads on, so each further quarter of a queue counts as another burst.
 */
export class EventBurst {
  #count = 0
  readonly #overflowAt: number

  /** `queued`: the kernel's queue length (fs.inotify.max_queued_events, read from /proc by default). */
  constructor(queued = queueLength()) {
    this.#overflowAt = Math.max(1, Math.floor(queued / 4))
  }

  /** Counts one event; true for each one that brings this turn's count to a multiple of the overflow mark. */
  heard(): boolean {
    if (++this.#count === 1) setImmediate(() => (this.#count = 0))
    return this.#count % this.#overflowAt === 0
  }
}

/** The kernel's inotify queue length (fs.inotify.max_queued_events), 16384 when unknown. */
export function queueLength(): number {
  try {
    return Number(readFileSync('/proc/sys/fs/inotify/max_queued_events', 'utf8')) || 16384
  } catch {
    return 16384
  }
}

/** Decisions that wait for this turn's check phase, after the poll phase has delivered the watches' events: one setImmediate for all that wait. */
export class CheckPhase {
  #waiting: Array<() => void> = []

  /** Runs `run` in this turn's check phase, with its outcome as the promise's. */
  run<T>(run: () => T | Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.#waiting.length === 0) setImmediate(this.#answer)
      this.#waiting.push(() => {
        try {
          resolve(run())
        } catch (error) {
          reject(error)
        }
      })
    })
  }

  readonly #answer = (): void => {
    const waiting = this.#waiting
    this.#waiting = []
    for (const answer of waiting) answer()
  }
}
