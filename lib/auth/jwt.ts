import { createHmac, timingSafeEqual } from 'node:crypto'

// JSON Web Tokens (RFC 7519) signed with HMAC SHA-256 (RFC 7518 §3.2), the one
// algorithm accepted: the header's `alg` is checked before anything else, so a
// token cannot choose `none` or another key type (RFC 8725 §2.1, §3.1). The
// claims are the ones json-server-auth's tokens carry (`sub`, `email`, `iat`,
// `exp`), so a token made by either verifies on the other with the same secret.

/** A token longer than this is refused before it is decoded: a header is not a place for a body. */
export const MAX_TOKEN_LENGTH = 8 * 1024
/** json-server-auth's JWT_EXPIRES_IN, one hour. */
export const DEFAULT_LIFETIME_SECONDS = 60 * 60

/** What a verified token says. Other claims it carries are kept as they came. */
export interface TokenClaims {
  sub: string
  email?: string
  iat?: number
  exp: number
  nbf?: number
  [claim: string]: unknown
}

/** Why a token was refused, each answered `401` with its own message. */
export type TokenRefusal = 'malformed' | 'algorithm' | 'signature' | 'expired' | 'not-yet-valid'

export type TokenVerdict = { ok: true; claims: TokenClaims } | { ok: false; reason: TokenRefusal; message: string }

export interface SignOptions {
  /** Seconds from now until `exp`; an hour unless told. */
  lifetimeSeconds?: number
  /** Now, in milliseconds since the epoch (a clock for tests). */
  now?: number
  /** Claims of the issuer's own, added after `email` (restdir's accounts name the password a token was issued for). */
  claims?: Record<string, string | number>
}

/** A signed token for `{ sub, email }`, with `iat` now and `exp` an hour later. */
export function signToken(subject: { sub: string; email?: string }, secret: Uint8Array | string, options: SignOptions = {}): string {
  if (typeof subject.sub !== 'string' || subject.sub === '') throw new TypeError('a token\'s sub is a non-empty string')
  const iat = Math.floor((options.now ?? Date.now()) / 1000)
  const claims: Record<string, unknown> = { sub: subject.sub }
  if (subject.email !== undefined) claims.email = subject.email
  for (const [name, value] of Object.entries(options.claims ?? {})) if (!['sub', 'iat', 'exp'].includes(name)) claims[name] = value
  claims.iat = iat
  claims.exp = iat + (options.lifetimeSeconds ?? DEFAULT_LIFETIME_SECONDS)
  const signed = `${encodeJson({ alg: 'HS256', typ: 'JWT' })}.${encodeJson(claims)}`
  return `${signed}.${signature(signed, secret).toString('base64url')}`
}

/** Checks `token` in the order that spends least on a forgery: size and form, algorithm, signature, then times. */
export function verifyToken(token: string, secret: Uint8Array | string, options: { now?: number } = {}): TokenVerdict {
  if (typeof token !== 'string' || token.length > MAX_TOKEN_LENGTH) return refuse('malformed', `a token is at most ${MAX_TOKEN_LENGTH} characters`)
  const parts = token.split('.')
  if (parts.length !== 3) return refuse('malformed', `a token has three parts separated by dots, not ${parts.length}`)
  const [headerText, claimsText, signatureText] = parts
  const header = decodeJson(headerText)
  if (header === undefined) return refuse('malformed', 'the token\'s header is not base64url-encoded JSON object')
  if (header.alg !== 'HS256') return refuse('algorithm', `the token is signed with ${JSON.stringify(header.alg) ?? 'no algorithm'}; only HS256 is accepted`)
  // RFC 7515 §4.1.11: a header extension the recipient must understand, and this one knows none.
  if ('crit' in header) return refuse('malformed', 'the token\'s header names critical extensions ("crit"), which are not supported')
  const given = decodeBase64url(signatureText)
  const expected = signature(`${headerText}.${claimsText}`, secret)
  if (given === undefined || given.length !== expected.length || !timingSafeEqual(given, expected)) return refuse('signature', 'the token\'s signature does not match')
  const claims = decodeJson(claimsText)
  if (claims === undefined) return refuse('malformed', 'the token\'s claims are not base64url-encoded JSON object')
  if (typeof claims.sub !== 'string' || claims.sub === '') return refuse('malformed', 'the token has no subject (sub)')
  for (const name of ['exp', 'iat', 'nbf']) {
    if (claims[name] !== undefined && typeof claims[name] !== 'number') return refuse('malformed', `the token's ${name} is not a number`)
  }
  // A token that never expires is never issued here, and would outlive any password change.
  if (claims.exp === undefined) return refuse('malformed', 'the token has no expiry time (exp)')
  const now = Math.floor((options.now ?? Date.now()) / 1000)
  // RFC 7519 §4.1.4: the token must not be accepted on or after exp.
  if (now >= (claims.exp as number)) return refuse('expired', 'the token has expired')
  // RFC 7519 §4.1.5: nor before nbf.
  if (claims.nbf !== undefined && now < (claims.nbf as number)) return refuse('not-yet-valid', 'the token is not valid yet (nbf)')
  return { ok: true, claims: claims as TokenClaims }
}

function refuse(reason: TokenRefusal, message: string): TokenVerdict {
  return { ok: false, reason, message }
}

function signature(signed: string, secret: Uint8Array | string): Buffer {
  return createHmac('sha256', secret).update(signed, 'ascii').digest()
}

function encodeJson(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64url')
}

const BASE64URL = /^[A-Za-z0-9_-]*$/

/** base64url without padding (RFC 7515 §2), in its one spelling: `Buffer` alone would take other alphabets, padding and spare bits. */
function decodeBase64url(text: string): Buffer | undefined {
  if (!BASE64URL.test(text) || text.length % 4 === 1) return undefined
  const bytes = Buffer.from(text, 'base64url')
  return bytes.toString('base64url') === text ? bytes : undefined
}

/** A part of the token decoded as a JSON object, or undefined. */
function decodeJson(text: string): Record<string, unknown> | undefined {
  const bytes = decodeBase64url(text)
  if (bytes === undefined || bytes.length === 0) return undefined
  try {
    const value: unknown = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes))
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined
  } catch {
    return undefined
  }
}
