import type { NodePath } from './store.ts'

/**
 * What an operation of a store in one process needs to hold while it runs
 * (docs/http-api.md, "Versions and conditional requests"):
 * - `write`: the node itself, for a write to it (one write per node at a time);
 * - `keep`: a node that must stay, such as a write's owner (only a removal
 *   of it or of a node above it waits, or is waited for);
 * - `remove`: a node and its subtree, for a removal (writes and removals at,
 *   below or above it wait; writes elsewhere go on);
 * - `unique`: a collection among whose children a field is unique (claims on
 *   one collection run one at a time).
 */
export interface Claim {
  kind: 'write' | 'keep' | 'remove' | 'unique'
  path: NodePath
}

interface Holder {
  claims: readonly Claim[]
  start?: () => void
}

/**
 * Runs each task once no running task holds a claim that conflicts with its
 * own. Waiting tasks start in the order they came, except that a task may
 * pass waiting ones it does not conflict with: a write to one node never
 * waits behind the removal of an unrelated subtree.
 */
export class NodeLocks {
  /**
   * The running tasks by the path of each of their claims (see keyOf): a
   * task's own paths tell it the writes and collections it may conflict
   * with, instead of a scan of every running task, which cost each write
   * more the more were in flight.
   */
  readonly #byPath = new Map<string, Set<Holder>>()
  /** The running tasks that remove a subtree: they may conflict with claims on other paths, so each is checked. */
  readonly #removing = new Set<Holder>()
  readonly #running = new Set<Holder>()
  readonly #waiting: Holder[] = []

  async run<T>(claims: readonly Claim[], task: () => Promise<T>): Promise<T> {
    const holder: Holder = { claims }
    if (this.#blocked(holder, this.#waiting)) {
      await new Promise<void>((start) => {
        holder.start = start
        this.#waiting.push(holder)
      })
    } else {
      this.#add(holder)
    }
    try {
      return await task()
    } finally {
      this.#delete(holder)
      if (this.#waiting.length > 0) this.#wake()
    }
  }

  /** Whether `holder` conflicts with a running task or with one of `ahead` (the waiting tasks that came before it). */
  #blocked(holder: Holder, ahead: readonly Holder[]): boolean {
    if (this.#running.size > 0) {
      // A removal may conflict with any path on its chain: it looks at every running task (removals are rare).
      if (holder.claims.some((claim) => claim.kind === 'remove')) {
        for (const other of this.#running) if (clash(other.claims, holder.claims)) return true
      } else {
        for (const removal of this.#removing) if (clash(removal.claims, holder.claims)) return true
        // Writes and unique collections conflict only with claims on the same path.
        for (const claim of holder.claims) {
          if (claim.kind === 'keep') continue
          const same = this.#byPath.get(keyOf(claim.path))
          if (same) for (const other of same) if (other.claims.some((held) => conflict(held, claim))) return true
        }
      }
    }
    return ahead.length > 0 && ahead.some((waiting) => clash(waiting.claims, holder.claims))
  }

  #add(holder: Holder): void {
    this.#running.add(holder)
    for (const claim of holder.claims) {
      if (claim.kind === 'remove') this.#removing.add(holder)
      const key = keyOf(claim.path)
      const same = this.#byPath.get(key)
      if (same) same.add(holder)
      else this.#byPath.set(key, new Set([holder]))
    }
  }

  #delete(holder: Holder): void {
    this.#running.delete(holder)
    this.#removing.delete(holder)
    for (const claim of holder.claims) {
      const key = keyOf(claim.path)
      const same = this.#byPath.get(key)
      if (!same) continue
      same.delete(holder)
      if (same.size === 0) this.#byPath.delete(key)
    }
  }

  #wake(): void {
    const stillWaiting: Holder[] = []
    for (const holder of this.#waiting) {
      if (this.#blocked(holder, stillWaiting)) {
        stillWaiting.push(holder)
        continue
      }
      this.#add(holder)
      holder.start!()
    }
    this.#waiting.splice(0, this.#waiting.length, ...stillWaiting)
  }
}

/**
 * A path as a key of the running tasks. Two paths that differ may share a key
 * only when a segment holds NUL; the tasks under a key are then compared
 * exactly (clash), so sharing one never lets a conflict through.
 */
function keyOf(path: NodePath): string {
  return path.join('\0')
}

function clash(a: readonly Claim[], b: readonly Claim[]): boolean {
  return a.some((one) => b.some((other) => conflict(one, other)))
}

function conflict(a: Claim, b: Claim): boolean {
  if (a.kind === 'unique' || b.kind === 'unique') return a.kind === b.kind && samePath(a.path, b.path)
  if (a.kind === 'write' && b.kind === 'write') return samePath(a.path, b.path)
  if (a.kind === 'remove' && b.kind === 'remove') return within(a.path, b.path) || within(b.path, a.path)
  if (a.kind === 'keep' || b.kind === 'keep') {
    // A kept node conflicts only with a removal that would take it.
    const other = a.kind === 'keep' ? b : a
    return other.kind === 'remove' && within(a.kind === 'keep' ? a.path : b.path, other.path)
  }
  // A write and a removal: on one chain of nodes, the removal may take the written node or prune the folders on its way.
  return within(a.path, b.path) || within(b.path, a.path)
}

function samePath(a: NodePath, b: NodePath): boolean {
  return a.length === b.length && within(a, b)
}

/** Whether `path` is `top` or lies below it. */
function within(path: NodePath, top: NodePath): boolean {
  if (path.length < top.length) return false
  for (let index = 0; index < top.length; index++) if (path[index] !== top[index]) return false
  return true
}
