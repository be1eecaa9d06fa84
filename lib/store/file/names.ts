import type { Dirent } from 'node:fs'
import { opendir, readdir } from 'node:fs/promises'
import { basename, join } from 'node:path'
import { readOwnFile } from './document-file.ts'
import { decodeFolderName, encodeSegment, isHashedName } from './encode.ts'
import type { NodePath } from '../store.ts'

/** A node's document, inside the node's directory. */
export const DOC_FILE = '@.json'

/** In a hashed directory: the whole segment in UTF-8, since its cut name cannot be decoded. */
export const NAME_FILE = '@name'

/**
 * The segment a child directory stands for, or undefined when the entry is
 * not a node: the store's own `@` files, a file a person dropped there, a
 * folder whose name encodeSegment would not make.
 */
export async function childSegment(directory: string, entry: Dirent): Promise<string | undefined> {
  if (!mayBeNode(entry)) return undefined
  return isHashedName(entry.name) ? readNameFile(join(directory, entry.name)) : decodeOrUndefined(entry.name)
}

/** The segments of a directory's children, in no particular order. */
export async function childSegments(directory: string, entries: Dirent[]): Promise<string[]> {
  const segments: string[] = []
  const hashed: Promise<string | undefined>[] = []
  for (const entry of entries) {
    if (!mayBeNode(entry)) continue
    // Most names decode on the spot; only hashed ones need a file read.
    if (isHashedName(entry.name)) hashed.push(readNameFile(join(directory, entry.name)))
    else {
      const segment = decodeOrUndefined(entry.name)
      if (segment !== undefined) segments.push(segment)
    }
  }
  for (const segment of await Promise.all(hashed)) if (segment !== undefined) segments.push(segment)
  return segments
}

/**
 * Links where a node's folder would be, anywhere below `root`, as the paths
 * they stand for (a hashed name as it is): the store never follows one, so
 * no listing shows them (docs/storage.md, "Where the data goes").
 */
export async function linkedNodes(root: string): Promise<NodePath[]> {
  const found: NodePath[] = []
  const walk = async (directory: string, path: NodePath): Promise<void> => {
    const entries = await readdir(directory, { withFileTypes: true })
    const below: [string, string][] = []
    for (const entry of entries) {
      if (entry.isSymbolicLink() && !entry.name.startsWith('@')) {
        const segment = decodeOrUndefined(entry.name)
        if (segment !== undefined || isHashedName(entry.name)) found.push([...path, segment ?? entry.name])
        continue
      }
      const segment = await childSegment(directory, entry)
      if (segment !== undefined) below.push([entry.name, segment])
    }
    // A slice at a time: a big collection never opens all its folders at once.
    for (let start = 0; start < below.length; start += 64) {
      await Promise.all(below.slice(start, start + 64).map(([name, segment]) => walk(join(directory, name), [...path, segment])))
    }
  }
  await walk(root, [])
  return found
}

/** True when the first child that is a node turns up; stops there, so a big collection costs little. */
export async function hasChildNode(directory: string): Promise<boolean> {
  for await (const entry of await opendir(directory)) {
    if ((await childSegment(directory, entry)) !== undefined) return true
  }
  return false
}

/** A directory name that may stand for a node (a hashed one is confirmed by its `@name`). */
export function isNodeName(name: string): boolean {
  return !name.startsWith('@') && (isHashedName(name) || decodeOrUndefined(name) !== undefined)
}

/** Only real folders: a link is never a node, so a listing never leads out of the store. */
function mayBeNode(entry: Dirent): boolean {
  return !entry.name.startsWith('@') && entry.isDirectory()
}

function decodeOrUndefined(name: string): string | undefined {
  try {
    return decodeFolderName(name)
  } catch {
    return undefined
  }
}

/** Reads a hashed directory's `@name`, trusting it only when it really hashes to that directory. */
export async function readNameFile(directory: string): Promise<string | undefined> {
  // Read like a document: a pipe or a link in its place must not hang or lead a listing out of the store.
  const segment = await readOwnFile(join(directory, NAME_FILE))
  return segment !== undefined && encodeSegment(segment) === basename(directory) ? segment : undefined
}
