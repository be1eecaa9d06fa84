import { isIPv4, isIPv6 } from 'node:net'

// Login attempts slowed per key: one key for the account tried, one for the
// address trying, so that neither many passwords against one account nor one
// password against many accounts goes fast (OWASP Authentication Cheat Sheet,
// "Protect Against Automated Attacks"). An attempt counts as a failure from the
// moment it is allowed, so attempts sent all at once, before any has failed,
// are counted too; a success takes its count back. After `failures` within
// `windowMs`, a key is refused until the oldest of them leaves the window, and
// the caller answers 429 with Retry-After (RFC 6585 §4) in whole seconds.

export interface ThrottleOptions {
  /** Failures a key may have within the window; the next attempt is refused. 5 unless told. */
  failures?: number
  /** The window, in milliseconds: 15 minutes unless told. */
  windowMs?: number
  /** Keys remembered at most; past it, the key least recently used is forgotten. 10,000 unless told. */
  maxKeys?: number
  /** The clock, in milliseconds (tests pass their own). */
  now?: () => number
}

export interface Throttle {
  /**
   * 0 if an attempt on every one of `keys` may be made now, and then it is
   * counted as a failure on each until `succeeded` says otherwise; else the
   * whole seconds to wait (at least 1), and nothing is counted.
   */
  attempt(keys: readonly string[]): number
  /** The attempt succeeded: `accountKey` starts afresh, and the attempt is taken back from `otherKeys` (the address). */
  succeeded(accountKey: string, otherKeys?: readonly string[]): void
  /** Keys remembered now. */
  readonly size: number
}

export function createThrottle(options: ThrottleOptions = {}): Throttle {
  const failures = Math.max(1, options.failures ?? 5)
  const windowMs = options.windowMs ?? 15 * 60 * 1000
  const maxKeys = Math.max(1, options.maxKeys ?? 10_000)
  const now = options.now ?? Date.now
  /** Per key, the times of its failures in the window, oldest first; a Map keeps keys in order of last use. */
  const failuresOf = new Map<string, number[]>()

  /** The key's failures still inside the window at `time`. */
  const recent = (key: string, time: number): number[] => {
    const times = failuresOf.get(key)
    if (times === undefined) return []
    while (times.length > 0 && times[0] <= time - windowMs) times.shift()
    if (times.length === 0) failuresOf.delete(key)
    return times
  }

  const touch = (key: string, times: number[]): void => {
    failuresOf.delete(key)
    failuresOf.set(key, times)
    for (const oldest of failuresOf.keys()) {
      if (failuresOf.size <= maxKeys) break
      failuresOf.delete(oldest)
    }
  }

  return {
    attempt(keys) {
      const time = now()
      let waitMs = 0
      for (const key of keys) {
        const times = recent(key, time)
        if (times.length >= failures) waitMs = Math.max(waitMs, times[times.length - failures] + windowMs - time)
      }
      if (waitMs > 0) {
        // A refused key is in use: it is kept longest, so that a flood of new keys forgets it last.
        for (const key of keys) {
          const times = failuresOf.get(key)
          if (times !== undefined) touch(key, times)
        }
        return Math.max(1, Math.ceil(waitMs / 1000))
      }
      for (const key of keys) touch(key, [...recent(key, time), time].slice(-failures))
      return 0
    },
    succeeded(accountKey, otherKeys = []) {
      failuresOf.delete(accountKey)
      const time = now()
      for (const key of otherKeys) {
        const times = recent(key, time)
        if (times.length === 0) continue
        times.pop()
        if (times.length === 0) failuresOf.delete(key)
      }
    },
    get size() {
      return failuresOf.size
    },
  }
}

/** The key of an account: its name or email, case-folded, so that spellings of one account share its count. */
export function accountKey(identifier: string): string {
  return `account:${identifier.normalize('NFC').toLowerCase()}`
}

/**
 * The key of a client's address. An IPv6 host is usually given a whole /64
 * (RFC 6177), so its address is its /64: counting each address apart would let
 * it try 2^64 times as often. An IPv4 address mapped into IPv6 is the IPv4 one.
 */
export function addressKey(address: string): string {
  const plain = address.replace(/%.*$/, '')
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(plain)
  if (mapped !== null && isIPv4(mapped[1])) return `address:${mapped[1]}`
  if (isIPv4(plain) || !isIPv6(plain)) return `address:${plain}`
  const [head, tail = ''] = plain.toLowerCase().split('::')
  const headGroups = head === '' ? [] : head.split(':')
  const tailGroups = !plain.includes('::') || tail === '' ? [] : tail.split(':')
  const groups = plain.includes('::') ? [...headGroups, ...Array(8 - headGroups.length - tailGroups.length).fill('0'), ...tailGroups] : headGroups
  return `address:${groups.slice(0, 4).map((group) => Number.parseInt(group, 16).toString(16)).join(':')}::/64`
}
