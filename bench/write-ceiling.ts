import { mkdir, mkdtemp, open, rename } from 'node:fs/promises'
import { join } from 'node:path'

/**
 * The write ceiling: the file store's atomic write sequence (make the
 * node's directory, write a temp file beside the document, rename it into
 * place) in a bare loop with many writes in flight, no HTTP. No write
 * through the server can beat it on this file system, so POST and PUT are
 * reported as a fraction of it.
 *
 * The loop leaves what it wrote where it is: removing a tree of some 100 000
 * folders and files right before restdir is measured would measure the disk
 * instead. On ext4, each inode allocated in the next minutes walks past the
 * recently freed ones (the same server made 165 µs of CPU a POST before an
 * `rm -rf` of ~280 000 inodes, 364 after it). The bench removes the scratch
 * folder with everything else at the very end of its run.
 */
export interface WriteCeilingOptions {
  /** A scratch folder; each call writes into a new folder inside it and leaves it there (the caller removes `dir` at the end of its whole run). */
  dir: string
  /** `create`: each write makes a new node (as POST does); `replace`: writes over existing documents (as PUT does). */
  mode: 'create' | 'replace'
  /** fsync the temp file and the directory, as `--sync` asks. */
  sync: boolean
  inFlight: number
  /** Seconds. */
  duration: number
  /** The document text to write. */
  text: string
}

export interface WriteCeilingResult {
  writes: number
  /** Writes per second. */
  rps: number
  p50: number
  p99: number
  /** CPU time of this process (all its threads, the kernel's work for them included) per write, in microseconds. */
  cpuUs: number
}

export async function measureWriteCeiling(options: WriteCeilingOptions): Promise<WriteCeilingResult> {
  await mkdir(options.dir, { recursive: true })
  const root = await mkdtemp(join(options.dir, `ceiling-${options.mode}-`))
  const replaceTargets = 1000
  if (options.mode === 'replace') {
    for (let index = 0; index < replaceTargets; index++) await atomicWrite(join(root, `n${index}`), `t${index}`, options.text, false)
  }
  const latencies: number[] = []
  let counter = 0
  let stopped = false
  const startedAt = performance.now()
  const cpuFrom = process.cpuUsage()
  const loop = async (lane: number) => {
    while (!stopped) {
      const number = counter++
      const directory = options.mode === 'create' ? join(root, `c${number}`) : join(root, `n${number % replaceTargets}`)
      const begun = performance.now()
      await atomicWrite(directory, `tmp-${lane}-${number}`, options.text, options.sync)
      if (!stopped) latencies.push(performance.now() - begun)
    }
  }
  const lanes = Array.from({ length: options.inFlight }, (_, lane) => loop(lane))
  await new Promise((resolve) => setTimeout(resolve, options.duration * 1000))
  // A very short window on a slow disk may close before the first write: wait for one (10 s at most).
  for (let waited = 0; latencies.length === 0 && waited < 10_000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50))
  stopped = true
  const elapsed = (performance.now() - startedAt) / 1000
  await Promise.all(lanes)
  const cpu = process.cpuUsage(cpuFrom)
  const sorted = Float64Array.from(latencies).sort()
  const at = (fraction: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))]
  return { writes: latencies.length, rps: latencies.length / elapsed, p50: at(0.5), p99: at(0.99), cpuUs: (cpu.user + cpu.system) / latencies.length }
}

/** mkdir -p, temp file (fsynced with `sync`), rename, and with `sync` the directory flushed too. */
async function atomicWrite(directory: string, tempName: string, text: string, sync: boolean): Promise<void> {
  await mkdir(directory, { recursive: true })
  const tempPath = join(directory, tempName)
  const handle = await open(tempPath, 'wx')
  try {
    await handle.writeFile(text)
    if (sync) await handle.sync()
  } finally {
    await handle.close()
  }
  await rename(tempPath, join(directory, '@.json'))
  if (sync) {
    const directoryHandle = await open(directory, 'r')
    try {
      await directoryHandle.sync()
    } finally {
      await directoryHandle.close()
    }
  }
}
