import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { createHmac } from 'node:crypto'
import { createRequire } from 'node:module'
import { DEFAULT_LIFETIME_SECONDS, MAX_TOKEN_LENGTH, signToken, verifyToken, type TokenRefusal } from '../../lib/auth/jwt.ts'

// lib/auth/jwt.ts against jsonwebtoken 8, the library json-server-auth signs
// and verifies with: tokens made by either verify on the other with the same
// secret, and every refusal has its own named reason.

const require = createRequire(import.meta.url)
/** What these tests use of jsonwebtoken 8 (it ships no types). */
interface JsonWebToken {
  sign(payload: object, secret: string, options?: Record<string, unknown>): string
  verify(token: string, secret: string, options?: Record<string, unknown>): unknown
  decode(token: string, options: { complete: true }): { header: unknown } | null
}
const jsonwebtoken = require('jsonwebtoken') as JsonWebToken

const SECRET = 'a secret of at least thirty-two characters, for tests'
const OTHER_SECRET = 'another secret of at least thirty-two characters'
const NOW = Date.UTC(2026, 0, 15, 12, 0, 0)
const NOW_SECONDS = NOW / 1000

function base64url(value: unknown): string {
  return Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url')
}

/** A token with any header and claims, signed with HMAC SHA-256 over exactly what is given. */
function forge(header: unknown, claims: unknown, secret = SECRET): string {
  const signed = `${base64url(header)}.${base64url(claims)}`
  return `${signed}.${createHmac('sha256', secret).update(signed).digest('base64url')}`
}

function refusal(token: string, now = NOW, secret = SECRET): TokenRefusal | 'accepted' {
  const verdict = verifyToken(token, secret, { now })
  return verdict.ok ? 'accepted' : verdict.reason
}

test('a token signed here carries sub, email, iat and exp an hour later, and jsonwebtoken verifies it with HS256', () => {
  const token = signToken({ sub: '1', email: 'olivier@mail.com' }, SECRET, { now: NOW })
  const decoded = jsonwebtoken.verify(token, SECRET, { algorithms: ['HS256'], clockTimestamp: NOW_SECONDS + 10 }) as Record<string, unknown>
  assert.equal(decoded, { sub: '1', email: 'olivier@mail.com', iat: NOW_SECONDS, exp: NOW_SECONDS + DEFAULT_LIFETIME_SECONDS })
  assert.equal(jsonwebtoken.decode(token, { complete: true })?.header, { alg: 'HS256', typ: 'JWT' })
  assert.throws(() => jsonwebtoken.verify(token, OTHER_SECRET, { clockTimestamp: NOW_SECONDS }), /invalid signature/)
  const verdict = verifyToken(token, SECRET, { now: NOW + 10_000 })
  assert.ok(verdict.ok)
  if (verdict.ok) assert.equal(verdict.claims, decoded)
})

test('a token jsonwebtoken signs as json-server-auth does verifies here, with its claims', () => {
  const token = jsonwebtoken.sign({ email: 'olivier@mail.com' }, SECRET, { expiresIn: '1h', subject: '7' })
  const verdict = verifyToken(token, SECRET)
  assert.ok(verdict.ok, JSON.stringify(verdict))
  if (verdict.ok) {
    assert.is(verdict.claims.sub, '7')
    assert.is(verdict.claims.email, 'olivier@mail.com')
    assert.is((verdict.claims.exp) - (verdict.claims.iat as number), 3600)
  }
  assert.is(refusal(token, Date.now(), OTHER_SECRET), 'signature')
})

test('another algorithm is refused as such: none, HS512 and HS384 from jsonwebtoken, RS256 and ES256 headers, none spelled otherwise', () => {
  const claims = { sub: '1', email: 'a@b.c', iat: NOW_SECONDS, exp: NOW_SECONDS + 3600 }
  const tokens = [
    `${base64url({ alg: 'none', typ: 'JWT' })}.${base64url(claims)}.`,
    `${base64url({ alg: 'none' })}.${base64url(claims)}.${forge({ alg: 'HS256' }, claims).split('.')[2]}`,
    jsonwebtoken.sign(claims, SECRET, { algorithm: 'HS512' }),
    jsonwebtoken.sign(claims, SECRET, { algorithm: 'HS384' }),
    jsonwebtoken.sign(claims, '', { algorithm: 'none' }),
    // RS256 with the secret as an HMAC key: the key-confusion attack (RFC 8725 §2.1).
    forge({ alg: 'RS256', typ: 'JWT' }, claims),
    forge({ alg: 'ES256' }, claims),
    forge({ alg: 'NONE' }, claims),
    forge({ alg: 'hs256' }, claims),
    forge({ typ: 'JWT' }, claims),
    forge({ alg: ['HS256'] }, claims),
  ]
  for (const token of tokens) assert.is(refusal(token), 'algorithm', token)
  assert.is(refusal(forge({ alg: 'HS256', typ: 'JWT' }, claims)), 'accepted', 'the same claims under HS256 are accepted')
})

test('a bad signature is refused: another secret, a changed claim, a changed header, a cut or missing signature', () => {
  const token = signToken({ sub: '1', email: 'a@b.c' }, SECRET, { now: NOW })
  const [header, claims, signature] = token.split('.')
  const raised = base64url({ ...JSON.parse(Buffer.from(claims, 'base64url').toString()), sub: '2' })
  assert.is(refusal(token, NOW, OTHER_SECRET), 'signature')
  assert.is(refusal(`${header}.${raised}.${signature}`), 'signature')
  assert.is(refusal(`${base64url({ typ: 'JWT', alg: 'HS256' })}.${claims}.${signature}`), 'signature')
  assert.is(refusal(`${header}.${claims}.${signature.slice(0, -2)}`), 'signature')
  assert.is(refusal(`${header}.${claims}.`), 'signature')
  assert.is(refusal(`${header}.${claims}.${signature}AAAA`), 'signature')
  const flipped = Buffer.from(signature, 'base64url')
  flipped[31] ^= 1
  assert.is(refusal(`${header}.${claims}.${flipped.toString('base64url')}`), 'signature')
  // 43 characters carry 258 bits for the signature's 256: the same bytes spelled with other spare bits are another token.
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
  const respelled = signature.slice(0, -1) + alphabet[alphabet.indexOf(signature.slice(-1)) ^ 1]
  assert.equal(Buffer.from(respelled, 'base64url'), Buffer.from(signature, 'base64url'), 'Buffer reads both spellings alike')
  assert.is(refusal(`${header}.${claims}.${respelled}`), 'signature')
  assert.is(refusal(token), 'accepted')
})

test('an expired token is refused from its exp on, here and by jsonwebtoken; a token not valid yet (nbf) too', () => {
  const token = signToken({ sub: '1' }, SECRET, { now: NOW })
  const exp = NOW + DEFAULT_LIFETIME_SECONDS * 1000
  assert.is(refusal(token, exp - 1000), 'accepted')
  assert.is(refusal(token, exp), 'expired')
  assert.is(refusal(token, exp + 86_400_000), 'expired')
  assert.throws(() => jsonwebtoken.verify(token, SECRET, { clockTimestamp: exp / 1000 }), /jwt expired/)
  const theirs = jsonwebtoken.sign({ email: 'a@b.c' }, SECRET, { expiresIn: '1h', subject: '1' })
  assert.is(refusal(theirs, Date.now() + 3_601_000), 'expired')
  const later = jsonwebtoken.sign({ email: 'a@b.c' }, SECRET, { expiresIn: '2h', notBefore: '1h', subject: '1' })
  assert.is(refusal(later, Date.now()), 'not-yet-valid')
  assert.is(refusal(later, Date.now() + 3_601_000), 'accepted')
  assert.is(refusal(signToken({ sub: '1' }, SECRET, { now: NOW, lifetimeSeconds: 60 }), NOW + 60_000), 'expired')
})

test('a malformed token is refused as such: segments, base64url, JSON, claims of the wrong type, size', () => {
  const good = signToken({ sub: '1' }, SECRET, { now: NOW })
  const [header, claims, signature] = good.split('.')
  const claimsOf = (value: unknown) => forge({ alg: 'HS256', typ: 'JWT' }, value)
  const malformed = [
    '',
    'abc',
    `${header}.${claims}`,
    `${header}.${claims}.${signature}.${signature}`,
    `${header}..${signature}`,
    `${header.replace(/.$/, '+')}.${claims}.${signature}`, // + is base64, not base64url
    `${header}=.${claims}.${signature}`, // padding
    `${header.slice(0, -1)}.${claims}.${signature}`, // a spelling Buffer would read anyway
    `${base64url('not json')}.${claims}.${signature}`,
    `${base64url([1, 2])}.${claims}.${signature}`,
    `${base64url('null')}.${claims}.${signature}`,
    forge({ alg: 'HS256', crit: ['exp'] }, { sub: '1', exp: NOW_SECONDS + 60 }),
    claimsOf('not json'),
    claimsOf([]),
    claimsOf({ exp: NOW_SECONDS + 60 }), // no sub
    claimsOf({ sub: 1, exp: NOW_SECONDS + 60 }),
    claimsOf({ sub: '1' }), // no exp: never issued here, and it would never expire
    claimsOf({ sub: '1', exp: String(NOW_SECONDS + 60) }),
    claimsOf({ sub: '1', exp: NOW_SECONDS + 60, nbf: 'now' }),
    `${header}.${base64url({ sub: '1', exp: NOW_SECONDS + 60, pad: 'x'.repeat(MAX_TOKEN_LENGTH) })}.${signature}`,
    `${header}.${Buffer.from([0xff, 0xfe, 0x22]).toString('base64url')}.${signature}`, // not UTF-8
  ]
  for (const token of malformed) {
    const verdict = verifyToken(token, SECRET, { now: NOW })
    assert.ok(!verdict.ok && (verdict.reason === 'malformed' || verdict.reason === 'signature'), `${token.slice(0, 80)}: ${JSON.stringify(verdict)}`)
  }
  // Well signed, so refused for their form alone:
  for (const token of [claimsOf('not json'), claimsOf([]), claimsOf({ exp: NOW_SECONDS + 60 }), claimsOf({ sub: '1' }), claimsOf({ sub: '1', exp: 'soon' }), forge({ alg: 'HS256', crit: ['exp'] }, { sub: '1', exp: NOW_SECONDS + 60 }), '', `${header}.${claims}`, `${header}=.${claims}.${signature}`]) {
    assert.is(refusal(token), 'malformed', token)
  }
  const long = forge({ alg: 'HS256' }, { sub: '1', exp: NOW_SECONDS + 60, pad: 'x'.repeat(MAX_TOKEN_LENGTH) })
  assert.is(refusal(long), 'malformed', 'over 8 KiB, even well signed')
  const verdict = verifyToken(long, SECRET, { now: NOW })
  assert.ok(!verdict.ok && /at most 8192 characters/.test(verdict.message))
})

test('every refusal says why in words', () => {
  const token = signToken({ sub: '1' }, SECRET, { now: NOW })
  const messages = [verifyToken(token, OTHER_SECRET), verifyToken(token, SECRET, { now: NOW + 7_200_000 }), verifyToken('x', SECRET), verifyToken(forge({ alg: 'none' }, {}), SECRET)].map((verdict) => (verdict.ok ? '' : verdict.message))
  assert.equal(messages, ['the token\'s signature does not match', 'the token has expired', 'a token has three parts separated by dots, not 1', 'the token is signed with "none"; only HS256 is accepted'])
})

test.run()
