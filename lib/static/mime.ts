import { extname } from 'node:path'

const textTypes: Readonly<Record<string, string>> = {
  '.html': 'text/html',
  '.htm': 'text/html',
  '.css': 'text/css',
  // RFC 9239: text/javascript is the one registered type for JavaScript, modules included.
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.json': 'application/json',
  '.map': 'application/json',
  '.webmanifest': 'application/manifest+json',
  '.svg': 'image/svg+xml',
  '.txt': 'text/plain',
  '.md': 'text/markdown',
  '.csv': 'text/csv',
  '.xml': 'application/xml',
}

const binaryTypes: Readonly<Record<string, string>> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.avif': 'image/avif',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.wasm': 'application/wasm',
  '.pdf': 'application/pdf',
  '.mp4': 'video/mp4',
  '.webm': 'video/webm',
  '.mp3': 'audio/mpeg',
}

/**
 * The `Content-Type` for a file name, from its extension (case-insensitive).
 * Text types say `charset=utf-8` so browsers never guess; an unknown
 * extension is `application/octet-stream`, which a browser downloads rather than renders.
 */
export function contentTypeFor(fileName: string): string {
  const extension = extname(fileName).toLowerCase()
  if (Object.hasOwn(textTypes, extension)) return `${textTypes[extension]}; charset=utf-8`
  if (Object.hasOwn(binaryTypes, extension)) return binaryTypes[extension]!
  return 'application/octet-stream'
}
