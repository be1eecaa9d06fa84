import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { decodeFolderName, encodeSegment } from '../../../lib/store/file/encode.ts'
import { seeded } from '../../support/random.ts'

/** What a name must be to work as a directory on Windows, macOS and Linux alike. */
function assertPortable(name: string): void {
  assert.match(name, /^[a-z0-9._!%~-]+$/, `${name} uses only lower-case ASCII letters, digits and -_.!%~`)
  assert.not.match(name, /^\.|\.$/, `${name} neither starts nor ends with a dot`)
  assert.not.match(name, /^(con|prn|aux|nul|com\d|lpt\d)(\.|$)/, `${name} is no Windows device name`)
  assert.not.ok(name.startsWith('@'), `${name} cannot be taken for one of the store's own files`)
  assert.ok(name.length <= 200, `${name.slice(0, 20)}… fits in 255 bytes`)
}

function assertDistinct(segments: string[]): void {
  const seen = new Map<string, string>()
  for (const segment of segments) {
    // What a case-folding, normalizing file system (macOS, Windows) would compare.
    const folded = encodeSegment(segment).normalize('NFC').toLowerCase()
    const earlier = seen.get(folded)
    if (earlier !== undefined && earlier !== segment) {
      assert.unreachable(`${JSON.stringify(earlier)} and ${JSON.stringify(segment)} share the name ${folded}`)
    }
    seen.set(folded, segment)
  }
}

test('lower-case letters, digits, hyphens and underscores stay as they are', () => {
  assert.is(encodeSegment('user'), 'user')
  assert.is(encodeSegment('abc-123_x'), 'abc-123_x')
})

test('an upper-case letter becomes ! and its lower-case letter', () => {
  assert.is(encodeSegment('User'), '!user')
  assert.is(encodeSegment('aB'), 'a!b')
  assert.is(encodeSegment('Ab'), '!ab')
})

test('every other character becomes its UTF-8 bytes as %xx in lower-case hex', () => {
  assert.is(encodeSegment('é'), '%c3%a9')
  assert.is(encodeSegment('a/b'), 'a%2fb')
  assert.is(encodeSegment('a\\b'), 'a%5cb')
  assert.is(encodeSegment('%2F'), '%252!f')
  assert.is(encodeSegment('~'), '%7e')
  assert.is(encodeSegment('@'), '%40')
  assert.is(encodeSegment('a b'), 'a%20b')
  assert.is(encodeSegment('\0'), '%00')
  assert.is(encodeSegment('😀'), '%f0%9f%98%80')
})

test('a dot stays inside a name but is escaped first and last, so . and .. are ordinary names', () => {
  assert.is(encodeSegment('.'), '%2e')
  assert.is(encodeSegment('..'), '%2e%2e')
  assert.is(encodeSegment('...'), '%2e.%2e')
  assert.is(encodeSegment('a.b'), 'a.b')
  assert.is(encodeSegment('.env'), '%2eenv')
  // Windows silently drops trailing dots and spaces from names.
  assert.is(encodeSegment('a.'), 'a%2e')
  assert.is(encodeSegment('a '), 'a%20')
  assert.is(encodeSegment('a. '), 'a.%20')
})

test('Windows device names, also with an extension, get their first letter escaped', () => {
  assert.is(encodeSegment('con'), '%63on')
  assert.is(encodeSegment('con.txt'), '%63on.txt')
  assert.is(encodeSegment('nul'), '%6eul')
  assert.is(encodeSegment('aux'), '%61ux')
  assert.is(encodeSegment('prn.x.y'), '%70rn.x.y')
  assert.is(encodeSegment('com1'), '%63om1')
  assert.is(encodeSegment('lpt9'), '%6cpt9')
  // Upper case is escaped with ! anyway, and longer words are no devices.
  assert.is(encodeSegment('CON'), '!c!o!n')
  assert.is(encodeSegment('Con'), '!con')
  assert.is(encodeSegment('console'), 'console')
  assert.is(encodeSegment('com10'), 'com10')
})

test('the empty segment has a name of its own, distinct from every other', () => {
  assert.is(encodeSegment(''), '!')
  assert.is(decodeFolderName('!'), '')
})

test('segments differing only in case, normalization or escaping get different names', () => {
  const nfc = 'caf\u00e9'
  const nfd = 'cafe\u0301'
  assert.is.not(nfc, nfd)
  assertDistinct(['Ab', 'aB', 'ab', 'AB'])
  assertDistinct([nfc, nfd])
  assertDistinct(['\u00c5', '\u212b', 'A\u030a']) // Å three ways, all equivalent under NFC
  assertDistinct(['\ufb01', 'fi']) // a ligature and its letters
  assertDistinct(['/', '%2F', '%2f', '%252F', '\\'])
  assertDistinct(['CON', 'con', 'Con', 'con.txt', '%63on', 'c', 'on'])
  assertDistinct(['.', '..', '...', '%2e', '%2E', '.%2e'])
  assertDistinct(['a', 'a.', 'a..', 'a ', 'a. ', 'a .', 'A'])
  assertDistinct(['', ' ', '!', '\0', '%', '%00', '@', '~'])
})

test('every name is portable across Windows, macOS and Linux', () => {
  const samples = ['', '.', '..', 'con', 'CON', 'a.', 'a ', '~', '@name', 'x'.repeat(300), '😀'.repeat(100), 'Ω/é\\:*?"<>|']
  for (const segment of samples) assertPortable(encodeSegment(segment))
})

test('a segment whose name would pass 200 characters is cut to 150, then ~ and 40 hex digits of a hash', () => {
  assert.is(encodeSegment('a'.repeat(200)), 'a'.repeat(200))
  const name = encodeSegment('a'.repeat(201))
  assert.is(name.length, 191)
  assert.match(name, new RegExp(`^a{150}~[0-9a-f]{40}$`))
  // Over 255 UTF-8 bytes of emoji: still a short portable name.
  const emoji = encodeSegment('😀'.repeat(70))
  assert.match(emoji, /^(%f0%9f%98%80){12}%f0%9f~[0-9a-f]{40}$/)
})

test('long segments sharing their first characters still get different names', () => {
  const common = 'b'.repeat(400)
  assertDistinct([common + '1', common + '2', common, common + 'B', common + 'b'])
})

test('the ~ of a hashed name never occurs in a whole one, and decodeFolderName refuses it', () => {
  assert.is(encodeSegment('~'.repeat(66)).length, 198)
  assert.not.ok(encodeSegment('~'.repeat(66)).includes('~'))
  assert.throws(() => decodeFolderName(encodeSegment('x'.repeat(300))))
})

test('decodeFolderName undoes encodeSegment', () => {
  const samples = ['user', 'User', 'a/b', '..', '.', '...', 'CON', 'con.txt', 'é', 'cafe\u0301', '😀', 'a b', '%2F', '', '!', '~', '\0', '\ud800', 'x\udc00y']
  for (const segment of samples) assert.is(decodeFolderName(encodeSegment(segment)), segment)
})

test('decodeFolderName refuses names encodeSegment does not make, so hand-made folders pose as no node', () => {
  const foreign = ['User', 'con', '.a', 'a.', 'a b', '%41', '%2E', '%2', '%zz', '%c3', '%c0%80', '%ed%a0%80%ed%b0%80', '!A', '!1', '!!', 'a~b', '%63onsole', '@name']
  for (const name of foreign) assert.throws(() => decodeFolderName(name), RangeError, name)
})

test('random segments never share a name, even ignoring case, and decode back (seeded)', () => {
  const random = seeded(20240611)
  const alphabet = ['a', 'b', 'z', 'A', 'B', 'Z', '0', '9', '.', '-', '_', '%', '2', 'f', 'F', '/', '\\', '!', '~', '@', ' ', '\0',
    'é', 'e\u0301', '\u00c5', '\u212b', 'ß', 'ẞ', 'İ', 'ı', '中', '😀', '\ud800', '\udfff', 'c', 'o', 'n']
  const segments: string[] = []
  for (let count = 0; count < 20000; count++) {
    const length = random.next() < 0.01 ? random.between(60, 120) : random.between(0, 8)
    let segment = ''
    for (let index = 0; index < length; index++) segment += alphabet[random.between(0, alphabet.length - 1)]
    segments.push(segment)
  }
  assertDistinct(segments)
  for (const segment of segments) {
    const name = encodeSegment(segment)
    assertPortable(name)
    if (!name.includes('~')) assert.is(decodeFolderName(name), segment)
  }
})

test.run()
