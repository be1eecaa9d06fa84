import { constants } from 'node:fs'
import { link, lstat, open, unlink } from 'node:fs/promises'
import { randomBytes } from 'node:crypto'
import { basename, dirname, join } from 'node:path'

// The key that signs a store's tokens is the store's own (json-server-auth's is
// a constant in its source, so anyone can mint a token): made at the first
// start and kept with the data, readable by its owner only, read back on every
// later start so that tokens outlive a restart. Given explicitly, it is used
// as given and no file is touched.

/** The shortest secret accepted: 32 characters, as RFC 7518 §3.2 asks a key at least as long as the hash (256 bits). */
export const MIN_SECRET_LENGTH = 32
/** A secret file is a line of text; anything longer is not one. */
const MAX_SECRET_FILE_BYTES = 4096

/** A secret that cannot be used: the message says what is wrong and what to do, for the command line to print. */
export class SecretError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'SecretError'
  }
}

/**
 * Where a store keeps its secret: inside a store folder as `@secret` (names
 * starting with `@` are the store's own, never a document's:
 * docs/storage.md), beside a `db.json` as `.db.json.secret`, the way its lock is `.db.json.lock`.
 */
export function secretPathFor(store: { folder: string } | { file: string }): string {
  if ('folder' in store) return join(store.folder, '@secret')
  return join(dirname(store.file), `.${basename(store.file)}.secret`)
}

/** The secret to sign with: `explicit` when given (at least MIN_SECRET_LENGTH characters), else the store's file, made if missing. */
export async function resolveSecret(options: { explicit?: string; path: string }): Promise<Buffer> {
  if (options.explicit !== undefined) return explicitSecret(options.explicit)
  return readOrCreateSecret(options.path)
}

/** A secret given on the command line or in the environment, checked for length. */
export function explicitSecret(text: string): Buffer {
  if ([...text].length < MIN_SECRET_LENGTH) {
    throw new SecretError(`The signing secret is ${[...text].length} characters long; it must have at least ${MIN_SECRET_LENGTH}, such as the output of: node -e "console.log(require('crypto').randomBytes(32).toString('hex'))"`)
  }
  return Buffer.from(text, 'utf8')
}

/**
 * Reads the secret at `path`, or makes it. A new secret is written whole to a
 * file of its own (mode 0600) and then linked to `path`: link(2) fails if the
 * name exists, so of instances starting together exactly one secret is made,
 * every one reads that one, and none can read a half-written file.
 */
export async function readOrCreateSecret(path: string): Promise<Buffer> {
  const existing = await readSecretFile(path)
  if (existing !== undefined) return existing
  await createSecretFile(path)
  const created = await readSecretFile(path)
  if (created === undefined) throw new SecretError(`The signing secret ${path} vanished as it was made; is another program removing it?`)
  return created
}

/** The secret in `path`, or undefined if there is no such file; refused if it is a link, not a file, or readable by others. */
async function readSecretFile(path: string): Promise<Buffer | undefined> {
  let handle
  try {
    // O_NOFOLLOW: a link is refused by the open itself, so nothing can swap one in after a check.
    handle = await open(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0))
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT') return undefined
    if (code === 'ELOOP' || code === 'EMLINK') throw new SecretError(`The signing secret ${path} is a symbolic link; it must be a file of its own, so that no other file becomes the key.`)
    throw new SecretError(`The signing secret ${path} cannot be read (${code ?? (error as Error).message}).`)
  }
  try {
    const stats = await handle.stat()
    if (!stats.isFile()) throw new SecretError(`The signing secret ${path} is not a regular file.`)
    if (process.platform === 'win32' && (await lstat(path)).isSymbolicLink()) throw new SecretError(`The signing secret ${path} is a symbolic link; it must be a file of its own.`)
    // Whoever can read the secret can sign in as anyone (POSIX modes; Windows has none to check).
    if (process.platform !== 'win32' && (stats.mode & 0o077) !== 0) {
      const mode = (stats.mode & 0o777).toString(8).padStart(4, '0')
      throw new SecretError(`The signing secret ${path} can be read or written by others (mode ${mode}); only its owner may: chmod 600 ${path}`)
    }
    if (stats.size > MAX_SECRET_FILE_BYTES) throw new SecretError(`The signing secret ${path} is ${stats.size} bytes, more than a secret (${MAX_SECRET_FILE_BYTES}); is it the right file?`)
    const text = (await handle.readFile('utf8')).replace(/\r?\n$/, '')
    if ([...text].length < MIN_SECRET_LENGTH) throw new SecretError(`The signing secret ${path} holds ${[...text].length} characters; it must have at least ${MIN_SECRET_LENGTH}. Remove the file to have a new one made (every token signed so far stops working).`)
    return Buffer.from(text, 'utf8')
  } finally {
    await handle.close()
  }
}

/** Writes 32 random bytes as hex to a new file of mode 0600, then links it into place unless another secret got there first. */
async function createSecretFile(path: string): Promise<void> {
  const temporary = `${path}.${randomBytes(6).toString('hex')}.tmp`
  try {
    const handle = await open(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600)
    try {
      await handle.writeFile(`${randomBytes(32).toString('hex')}\n`)
      await handle.sync()
    } finally {
      await handle.close()
    }
    await link(temporary, path).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error
    })
  } catch (error) {
    if (error instanceof SecretError) throw error
    throw new SecretError(`The signing secret ${path} cannot be made (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}).`)
  } finally {
    await unlink(temporary).catch(() => {})
  }
}
