import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { createRequire } from 'node:module'
import { hashPassword, MalformedHash, parseHash, utf8Bytes, verifyPassword, type BcryptVersion } from '../../lib/auth/bcrypt.ts'

// lib/auth/bcrypt.ts is held to bcryptjs 2.4, the library json-server-auth
// hashes with: the same password and salt make the same 60 characters, and a
// hash made by either verifies on the other, so a db.json's accounts move both
// ways. The constant-time comparison is not measured here (no test can tell
// timingSafeEqual from ===); only what it compares is.

const require = createRequire(import.meta.url)
/** What these tests use of bcryptjs 2.4 (it ships no types). */
interface Bcryptjs {
  hashSync(password: string, saltOrCost: string | number): string
  compareSync(password: string, hash: string): boolean
  genSaltSync(cost: number): string
}
const bcryptjs = require('bcryptjs') as Bcryptjs
const { SALT_LENGTH } = require('json-server-auth/dist/constants.js') as { SALT_LENGTH: number }

/** Passwords at the edges: empty, ASCII, two-, three- and four-byte UTF-8, and around the 72 bytes the key schedule reads. */
const PASSWORDS = [
  '',
  'a',
  'correct horse battery staple',
  'pässwörd ☃ 中文 😀',
  'x'.repeat(71),
  'x'.repeat(72),
  'x'.repeat(73),
  'y'.repeat(200),
  `${'z'.repeat(70)}é`, // 'é' ends at byte 72
  `${'z'.repeat(71)}é`, // 'é' crosses byte 72
  `${'z'.repeat(70)}😀`, // the emoji crosses byte 72
  'nul\u0000inside',
]

/** The 16 salt bytes of a bcryptjs salt string ("$2a$04$" and 22 characters). */
function saltBytes(salt: string): Uint8Array {
  return parseHash(`${salt}${'.'.repeat(31)}`).salt
}

test('with the same salt, every password hashes to exactly what bcryptjs makes, for $2a$, $2b$ and $2y$', () => {
  for (const version of ['2a', '2b', '2y'] as BcryptVersion[]) {
    const salt = bcryptjs.genSaltSync(4).replace(/^\$2a\$/, `$${version}$`)
    for (const password of PASSWORDS) {
      assert.is(hashPassword(password, 4, saltBytes(salt), version), bcryptjs.hashSync(password, salt), `${version} ${JSON.stringify(password)}`)
    }
  }
})

test('a hash made here verifies with bcryptjs, and one bcryptjs made verifies here; a wrong password fails on both', () => {
  for (const password of PASSWORDS) {
    const ours = hashPassword(password, 4)
    const theirs = bcryptjs.hashSync(password, 4)
    assert.ok(bcryptjs.compareSync(password, ours), `bcryptjs accepts ours for ${JSON.stringify(password)}`)
    assert.ok(verifyPassword(password, theirs), `we accept bcryptjs's for ${JSON.stringify(password)}`)
    assert.is(verifyPassword(`${password}!`, theirs), Buffer.byteLength(password) >= 72, `one more character for ${JSON.stringify(password)}`)
    assert.is(bcryptjs.compareSync(`${password}!`, ours), Buffer.byteLength(password) >= 72)
    assert.not.ok(verifyPassword(`!${password}`, theirs))
    assert.not.ok(bcryptjs.compareSync(`!${password}`, ours))
  }
})

test('only the first 72 bytes of the UTF-8 password count, as in bcryptjs; up to them, every byte does', () => {
  const hash = hashPassword('x'.repeat(72), 4)
  assert.ok(verifyPassword('x'.repeat(72) + 'anything after', hash))
  assert.ok(bcryptjs.compareSync('x'.repeat(72) + 'anything after', hash))
  assert.not.ok(verifyPassword('x'.repeat(71), hash))
  assert.not.ok(verifyPassword(`${'x'.repeat(71)}y`, hash))
  // Bytes, not characters: 36 two-byte characters fill the 72 bytes.
  const wide = hashPassword('é'.repeat(36), 4)
  assert.ok(verifyPassword(`${'é'.repeat(36)}more`, wide))
  assert.not.ok(verifyPassword('é'.repeat(35), wide))
  assert.is(utf8Bytes('é'.repeat(100), 72).length, 72)
})

test('json-server-auth\'s cost (its SALT_LENGTH, 10) hashes alike both ways, with a random salt each time', () => {
  assert.is(SALT_LENGTH, 10)
  const ours = hashPassword('bestPassw0rd')
  assert.match(ours, /^\$2a\$10\$[./A-Za-z0-9]{53}$/)
  assert.ok(bcryptjs.compareSync('bestPassw0rd', ours))
  assert.ok(verifyPassword('bestPassw0rd', bcryptjs.hashSync('bestPassw0rd', SALT_LENGTH)))
  assert.is.not(hashPassword('bestPassw0rd', 4), hashPassword('bestPassw0rd', 4), 'a new salt each time')
})

test('published test vectors (OpenBSD\'s and John the Ripper\'s) hash to their stated values', () => {
  const vectors: Array<[string, string]> = [
    ['U*U', '$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW'],
    ['U*U*', '$2a$05$CCCCCCCCCCCCCCCCCCCCC.VGOzA784oUp/Z0DY336zx7pLYAy0lwK'],
    ['', '$2a$05$CCCCCCCCCCCCCCCCCCCCC.7uG0VCzI2bS7j6ymqJi9CdcdxiRTWNy'],
    ['0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789chars after 72 are ignored', '$2a$05$abcdefghijklmnopqrstuu5s2v8.iXieOjg/.AySBTTZIIVFJeBui'],
  ]
  for (const [password, hash] of vectors) {
    assert.is(hashPassword(password, 5, parseHash(hash).salt), hash, JSON.stringify(password))
    assert.ok(verifyPassword(password, hash))
  }
})

test('a hash that is not bcrypt\'s is refused as MalformedHash, saying why, never another error', () => {
  const good = hashPassword('secret', 4)
  const malformed: unknown[] = [
    '',
    'secret', // a password stored in clear, as a hand-written db.json has it
    good.slice(0, -1),
    `${good}x`,
    good.replace('$2a$', '$2x$'),
    good.replace('$2a$', '$2$'),
    good.replace('$2a$', '$1$'),
    good.replace('$04$', '$03$'),
    good.replace('$04$', '$32$'),
    good.replace('$04$', '$4$'),
    good.replace('$04$', '$aa$'),
    `${good.slice(0, -1)}!`,
    `${good.slice(0, 10)}\u00e9${good.slice(11)}`,
    undefined,
    42,
    { hash: good },
  ]
  for (const hash of malformed) {
    try {
      verifyPassword('secret', hash as string)
      assert.unreachable(`${JSON.stringify(hash)} was accepted`)
    } catch (error) {
      assert.instance(error, MalformedHash, `${JSON.stringify(hash)}: ${String(error)}`)
      assert.match((error as Error).message, /^not a bcrypt hash: /)
    }
  }
  assert.ok(verifyPassword('secret', good), 'the well-formed one still verifies')
})

test('a cost outside 4–31, a salt of another length, or another version is refused before any work', () => {
  for (const cost of [3, 32, 10.5, Number.NaN]) assert.throws(() => hashPassword('x', cost), /cost is an integer from 4 to 31/)
  assert.throws(() => hashPassword('x', 4, new Uint8Array(15)), /salt is 16 bytes/)
  assert.throws(() => hashPassword('x', 4, undefined, '2x' as BcryptVersion), /version is 2a, 2b or 2y, not 2x/)
})

test('a password that is not a string verifies as false, never as a match', () => {
  const hash = hashPassword('', 4)
  for (const password of [undefined, null, 0, [], {}]) assert.is(verifyPassword(password as unknown as string, hash), false)
})

test.run()
