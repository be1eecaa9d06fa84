import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { mkdir, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { startServerOnFolder, type TestServer } from '../../support/helpers.ts'
import { openStream, type EventStream } from '../../support/event-stream.ts'

// Hand edits of a store folder's document files, pushed to open event streams within a second
// with no other request (docs/storage.md, "Editing by hand"), through real HTTP.

let server: TestServer
let stream: EventStream | undefined

test.before.each(async () => {
  server = await startServerOnFolder()
  assert.is((await server.request('PUT', '/notes/a', { body: { text: 'one' } })).status, 201)
})
test.after.each(async () => {
  stream?.close()
  await server.close()
})

/** A stream of the whole store, open long enough for its watch to be made. */
async function listen(): Promise<EventStream> {
  stream = await openStream(server.port, '/')
  assert.is((await stream.next()).event, 'value')
  await new Promise((resolve) => setTimeout(resolve, 400))
  return stream
}

async function heardWithinASecond(events: EventStream): Promise<{ event: string; data: unknown }> {
  const started = Date.now()
  const { event, data } = await events.next(1000)
  assert.ok(Date.now() - started <= 1000, `heard after ${Date.now() - started} ms`)
  return { event, data }
}

test('a document file saved by hand reaches an open stream as a put of what it now holds', async () => {
  const events = await listen()
  await writeFile(join(server.dir, 'notes', 'a', '@.json'), JSON.stringify({ id: 'a', text: 'edited by hand' }, null, 2))
  assert.equal(await heardWithinASecond(events), { event: 'put', data: { path: '/notes/a', data: { id: 'a', text: 'edited by hand' } } })
})

test('a document file added by hand is a put, and one removed by hand a delete', async () => {
  const events = await listen()
  await mkdir(join(server.dir, 'notes', 'b'))
  await writeFile(join(server.dir, 'notes', 'b', '@.json'), '{"id": "b"}\n')
  assert.equal(await heardWithinASecond(events), { event: 'put', data: { path: '/notes/b', data: { id: 'b' } } })
  await rm(join(server.dir, 'notes', 'a'), { recursive: true })
  assert.equal(await heardWithinASecond(events), { event: 'delete', data: { path: '/notes/a', data: null } })
})

test('the server\'s own writes are told once, not again as hand edits', async () => {
  const events = await listen()
  assert.is((await server.request('PUT', '/notes/a', { body: { text: 'two' } })).status, 200)
  assert.is((await server.request('DELETE', '/notes/a')).status, 200)
  assert.equal([(await events.next()).event, (await events.next()).event], ['put', 'delete'])
  // A removal of a collection is one change, not one more for each document that went with it.
  assert.is((await server.request('PUT', '/notes/b', { body: {} })).status, 201)
  assert.is((await server.request('PUT', '/notes/c', { body: {} })).status, 201)
  assert.is((await server.request('DELETE', '/notes')).status, 204)
  assert.equal([(await events.next()).event, (await events.next()).event, (await events.next()).data], ['put', 'put', { path: '/notes', data: null }])
  const more = await events.next(600).then((event) => event, () => undefined)
  assert.is(more, undefined, `nothing more: ${JSON.stringify(more)}`)
})

test('with no stream open, the server\'s own writes are not remembered for a walk that never comes', async () => {
  // The store's feed, counted from here on: who listens to it, and how often it is told.
  const store = server.server.handler.documents!.storeFolder!
  const subscribe = store.subscribe.bind(store)
  let listening = 0
  store.subscribe = (listener) => {
    listening++
    const stop = subscribe(listener)
    return () => {
      listening--
      return stop()
    }
  }
  for (let n = 0; n < 20; n++) assert.is((await server.request('PUT', `/notes/n${n}`, { body: { n } })).status, 201)
  assert.is(listening, 0, 'the hand edits heard the server\'s writes with no stream open')
  const events = await listen()
  assert.is(listening, 1, 'the hand edits hear the server\'s writes while a stream is open')
  events.close()
  const started = Date.now()
  while (listening > 0 && Date.now() - started < 2000) await new Promise((resolve) => setTimeout(resolve, 50))
  assert.is(listening, 0, 'the hand edits still heard the server\'s writes once the stream closed')
})

test('a walk still telling a hand edit when the last stream closes leaves nothing behind that would tell the server\'s later writes as hand edits', async () => {
  let events = await listen()
  // The walk that the next hand edit starts waits, once it has seen the folder, before it tells what it found.
  const store = server.server.handler.documents!.storeFolder!
  const reportHandEdit = store.reportHandEdit.bind(store)
  let letGo = () => {}
  const held = new Promise<void>((resolve) => (letGo = resolve))
  let holding = false
  store.reportHandEdit = async (path, told) => {
    if (!holding) {
      holding = true
      await held
    }
    return reportHandEdit(path, told)
  }
  await writeFile(join(server.dir, 'notes', 'a', '@.json'), '{"id": "a", "text": "by hand"}\n')
  const started = Date.now()
  while (!holding && Date.now() - started < 2000) await new Promise((resolve) => setTimeout(resolve, 20))
  assert.ok(holding, 'a walk found the hand edit')
  events.close()
  await new Promise((resolve) => setTimeout(resolve, 300)) // the watch goes with the last stream
  // Written with no stream open: nobody hears it as it happens, and it is no hand edit.
  assert.is((await server.request('PUT', '/notes/c', { body: { text: 'by the server' } })).status, 201)
  events = await listen() // a new watch, whose first walk waits for the one under way
  letGo()
  // The hand edit the held walk found is told; nothing after it.
  const told = await heardWithinASecond(events)
  assert.equal(told, { event: 'put', data: { path: '/notes/a', data: { id: 'a', text: 'by hand' } } })
  const more = await events.next(600).then((event) => event, () => undefined)
  assert.is(more, undefined, `nothing more: ${JSON.stringify(more)}`)
})

test.run()
