import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { accountKey, addressKey, createThrottle } from '../../lib/auth/throttle.ts'

// Login throttling (lib/auth/throttle.ts) on a clock the tests move: N failures
// in the window and the next attempt waits for the oldest to leave it; a
// success starts the account afresh; memory is capped.

const MINUTE = 60_000

function clock(start = 1_000_000): { now: () => number; advance(ms: number): void } {
  let time = start
  return { now: () => time, advance: (ms) => (time += ms) }
}

test('after 5 failures in 15 minutes the next attempt waits until the oldest leaves the window, in whole seconds', () => {
  const time = clock()
  const throttle = createThrottle({ failures: 5, windowMs: 15 * MINUTE, now: time.now })
  for (let attempt = 0; attempt < 5; attempt++) {
    assert.is(throttle.attempt(['account:ada']), 0, `attempt ${attempt + 1} is allowed`)
    time.advance(MINUTE)
  }
  // The first failure was 5 minutes ago: it leaves the window in 10.
  assert.is(throttle.attempt(['account:ada']), 600)
  time.advance(10 * MINUTE - 1500)
  assert.is(throttle.attempt(['account:ada']), 2, 'rounded up, never 0 while refused')
  time.advance(1000)
  assert.is(throttle.attempt(['account:ada']), 1)
  time.advance(500)
  assert.is(throttle.attempt(['account:ada']), 0, 'allowed once the oldest failure is out of the window')
  assert.is(throttle.attempt(['account:ada']), 60, 'and the next oldest decides the wait after that')
})

test('failures spread wider than the window never add up to a refusal', () => {
  const time = clock()
  const throttle = createThrottle({ failures: 3, windowMs: 10 * MINUTE, now: time.now })
  for (let attempt = 0; attempt < 50; attempt++) {
    assert.is(throttle.attempt(['account:ada']), 0, `attempt ${attempt + 1}`)
    time.advance(5 * MINUTE + 1)
  }
})

test('refused attempts are not counted, so waiting the time said is enough', () => {
  const time = clock()
  const throttle = createThrottle({ failures: 2, windowMs: MINUTE, now: time.now })
  throttle.attempt(['account:ada'])
  throttle.attempt(['account:ada'])
  for (let attempt = 0; attempt < 100; attempt++) assert.is(throttle.attempt(['account:ada']), 60)
  time.advance(MINUTE)
  assert.is(throttle.attempt(['account:ada']), 0)
})

test('a success starts the account afresh, and takes back its own attempt from the address, not the address\'s other failures', () => {
  const time = clock()
  const throttle = createThrottle({ failures: 3, windowMs: MINUTE, now: time.now })
  const keys = ['account:ada', 'address:10.0.0.1']
  assert.is(throttle.attempt(keys), 0)
  assert.is(throttle.attempt(keys), 0)
  assert.is(throttle.attempt(keys), 0)
  throttle.succeeded('account:ada', ['address:10.0.0.1'])
  assert.is(throttle.attempt(['account:ada', 'address:10.0.0.2']), 0, 'the account starts afresh')
  assert.is(throttle.attempt(['account:bob', 'address:10.0.0.1']), 0, 'the address had 2 failures and the success back')
  assert.is(throttle.attempt(['account:cy', 'address:10.0.0.1']), 60, 'now it has 3')
})

test('one address trying many accounts is refused, though no account reached the limit', () => {
  const time = clock()
  const throttle = createThrottle({ failures: 5, windowMs: MINUTE, now: time.now })
  for (let account = 0; account < 5; account++) assert.is(throttle.attempt([`account:${account}`, 'address:10.0.0.9']), 0)
  assert.is(throttle.attempt(['account:new', 'address:10.0.0.9']), 60)
  assert.is(throttle.attempt(['account:new', 'address:10.0.0.10']), 0, 'the same account from elsewhere is fine')
})

test('attempts made all at once, before any has failed, count: the sixth of a burst is refused', () => {
  const throttle = createThrottle({ failures: 5, windowMs: MINUTE, now: () => 0 })
  const answers = Array.from({ length: 20 }, () => throttle.attempt(['account:ada']))
  assert.equal(answers, [0, 0, 0, 0, 0, ...Array(15).fill(60)])
})

test('memory is capped: past maxKeys the least recently used keys are forgotten first', () => {
  const time = clock()
  const throttle = createThrottle({ failures: 1, windowMs: MINUTE, maxKeys: 1000, now: time.now })
  throttle.attempt(['account:kept'])
  throttle.attempt(['account:forgotten'])
  for (let key = 0; key < 998; key++) throttle.attempt([`address:${key}`])
  assert.is(throttle.size, 1000)
  assert.is(throttle.attempt(['account:kept']), 60, 'a refusal uses the key: it is the most recent now')
  throttle.attempt(['address:one-more'])
  assert.is(throttle.size, 1000)
  assert.is(throttle.attempt(['account:kept']), 60, 'kept, as recently used')
  assert.is(throttle.attempt(['account:forgotten']), 0, 'the least recently used key went first')
  for (let key = 0; key < 100_000; key++) throttle.attempt([`address:flood-${key}`])
  assert.is(throttle.size, 1000)
})

test('an IPv6 client is one address for its whole /64; an IPv4 address is itself, mapped into IPv6 or not', () => {
  const sameNetwork = ['2001:db8:0:1::1', '2001:db8:0:1:ffff:ffff:ffff:ffff', '2001:0DB8:0000:0001:0:0:0:2', '2001:db8:0:1::1%eth0']
  assert.equal(new Set(sameNetwork.map(addressKey)), new Set(['address:2001:db8:0:1::/64']))
  assert.is(addressKey('2001:db8:0:2::1'), 'address:2001:db8:0:2::/64')
  assert.is(addressKey('::1'), 'address:0:0:0:0::/64')
  assert.is(addressKey('fe80::1'), 'address:fe80:0:0:0::/64')
  assert.is(addressKey('::ffff:192.0.2.7'), 'address:192.0.2.7')
  assert.is(addressKey('192.0.2.7'), 'address:192.0.2.7')
  assert.is.not(addressKey('192.0.2.7'), addressKey('192.0.2.8'))
  const time = clock()
  const throttle = createThrottle({ failures: 2, windowMs: MINUTE, now: time.now })
  throttle.attempt([accountKey('a'), addressKey('2001:db8:0:1::1')])
  throttle.attempt([accountKey('b'), addressKey('2001:db8:0:1::2')])
  assert.is(throttle.attempt([accountKey('c'), addressKey('2001:db8:0:1::3')]), 60, 'a new address in the same /64 is no way round')
})

test('an account is one key however its name is cased or composed', () => {
  assert.is(accountKey('Ada@Mail.com'), accountKey('ada@mail.com'))
  assert.is(accountKey('Zoe\u0301'), accountKey('zoé'))
  assert.is.not(accountKey('ada@mail.com'), accountKey('ada@mail.co'))
})

test.run()
