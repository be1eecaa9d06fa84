import type { IncomingMessage, ServerResponse } from 'node:http'
import { StaticFiles } from './static.ts'
import type { StaticCacheOptions } from './static-cache.ts'

/**
 * Several static folders as one (`-s a -s b`, docs/cli.md): each is looked in, in the order
 * given, and the first that has the file answers, as json-server's chain of static folders
 * does. What is kept in memory of their files is shared out between them.
 */
export class StaticFolders {
  readonly #folders: StaticFiles[]

  constructor(roots: readonly string[], options: StaticCacheOptions | false = {}) {
    const share = (bytes: number | undefined) => (bytes === undefined ? undefined : Math.floor(bytes / roots.length))
    const each = options === false ? false : { ...options, maxBytes: share(options.maxBytes) }
    this.#folders = roots.map((root) => new StaticFiles(root, each))
  }

  /** A quick, synchronous "maybe": one of the folders may have the file. */
  mayServe(segments: readonly string[]): boolean {
    return this.#folders.some((folder) => folder.mayServe(segments))
  }

  /** Answers from the first folder that has the file; false, having written nothing, when none has. */
  async serve(req: IncomingMessage, res: ServerResponse, segments: readonly string[]): Promise<boolean> {
    for (const folder of this.#folders) if (await folder.serve(req, res, segments)) return true
    return false
  }

  close(): void {
    for (const folder of this.#folders) folder.close()
  }
}
