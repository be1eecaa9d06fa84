import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { applyEvent, createRoot, find, isExpandable, setChildren, survivingAncestor, visibleAncestor, visibleNodes, type TreeNode } from '../../www/tree-model.js'

// The playground's tree as data (www/tree-model.js): how the store's events reshape it, without a page.

/** The loaded part of the tree as nested names: `null` for a node whose children are not listed yet. */
function shape(node: TreeNode): unknown {
  if (node.children === null) return null
  return Object.fromEntries(node.children.map((child) => [child.name, shape(child)]))
}

/** A root with /notes (holding a and b) and /user listed, /user's children not yet. */
function loadedTree() {
  const root = createRoot('/')
  setChildren(root, ['notes', 'user'])
  setChildren(find(root, ['notes'])!, ['a', 'b'])
  setChildren(find(root, ['notes', 'a'])!, [])
  setChildren(find(root, ['notes', 'b'])!, [])
  return root
}

const names = (nodes: TreeNode[]) => nodes.map((node) => node.segments.join('/') || '(root)')

test('a put of a new node adds it in order, with nothing below it', () => {
  const root = loadedTree()
  const outcome = applyEvent(root, 'put', { path: '/notes/ab' })
  assert.equal(shape(root), { notes: { a: {}, ab: {}, b: {} }, user: null })
  assert.equal(names(find(root, ['notes'])!.children!), ['notes/a', 'notes/ab', 'notes/b'], 'in the order the server lists')
  assert.equal(names(outcome.changed), ['notes/ab', 'notes'])
  assert.is(outcome.flash, find(root, ['notes', 'ab']))
  assert.not.ok(isExpandable(outcome.flash!), 'a new node has nothing to open')
})

test('a put deep below adds the nodes on the way, each holding the next', () => {
  const root = loadedTree()
  const outcome = applyEvent(root, 'put', { path: '/notes/c/comments/x' })
  assert.equal(shape(root), { notes: { a: {}, b: {}, c: null }, user: null }, 'below a new node on the way, nothing is listed yet')
  assert.ok(isExpandable(find(root, ['notes', 'c'])!))
  assert.is(outcome.flash, find(root, ['notes', 'c']))
})

test('a put into a node whose children are not listed changes nothing and flashes that node', () => {
  const root = loadedTree()
  const outcome = applyEvent(root, 'put', { path: '/user/u1/playlist/p1' })
  assert.equal(shape(root), { notes: { a: {}, b: {} }, user: null })
  assert.equal(outcome.changed, [])
  assert.is(outcome.flash, find(root, ['user']))
})

test('a patch or a put of a known node keeps the tree and its open state', () => {
  const root = loadedTree()
  const notes = find(root, ['notes'])!
  notes.expanded = true
  for (const type of ['patch', 'put'] as const) {
    const outcome = applyEvent(root, type, { path: '/notes/a' })
    assert.equal(outcome.changed, [])
    assert.is(outcome.flash, find(root, ['notes', 'a']))
  }
  assert.equal(shape(root), { notes: { a: {}, b: {} }, user: null })
  assert.is(find(root, ['notes']), notes)
  assert.ok(notes.expanded)
})

test('percent-encoded segments in an event path are decoded into node names', () => {
  const root = loadedTree()
  applyEvent(root, 'put', { path: '/notes/a%2Fb%20c' })
  assert.ok(find(root, ['notes', 'a/b c']))
})

test('a delete takes the node out, flashes its parent, and asks to re-list a parent left empty', () => {
  const root = loadedTree()
  const a = find(root, ['notes', 'a'])!
  const first = applyEvent(root, 'delete', { path: '/notes/a' })
  assert.is(first.removed, a)
  assert.equal(names(first.changed), ['notes'])
  assert.is(first.flash, find(root, ['notes']))
  assert.is(first.recheck, undefined, 'notes still holds b')
  const second = applyEvent(root, 'delete', { path: '/notes/b' })
  assert.equal(shape(root), { notes: {}, user: null })
  assert.is(second.recheck, find(root, ['notes']), 'notes may have been pruned with its last child')
})

test('a delete of an unknown node flashes the closest known one and removes nothing', () => {
  const root = loadedTree()
  const outcome = applyEvent(root, 'delete', { path: '/user/u1' })
  assert.is(outcome.removed, undefined)
  assert.equal(outcome.changed, [])
  assert.is(outcome.flash, find(root, ['user']))
  assert.equal(shape(root), { notes: { a: {}, b: {} }, user: null })
})

test('a delete of the root empties the tree', () => {
  const root = loadedTree()
  const outcome = applyEvent(root, 'delete', { path: '/' })
  assert.equal(shape(root), {})
  assert.equal(outcome.changed, [root])
  assert.is(outcome.flash, undefined)
})

test('the visible nodes are the open ones\' children, and a closed ancestor stands for what it hides', () => {
  const root = loadedTree()
  assert.equal(names(visibleNodes(root, 300)), ['(root)', 'notes', 'user'])
  const notes = find(root, ['notes'])!
  notes.expanded = true
  assert.equal(names(visibleNodes(root, 300)), ['(root)', 'notes', 'notes/a', 'notes/b', 'user'])
  assert.equal(names(visibleNodes(root, 1)), ['(root)', 'notes', 'notes/a'], 'only the drawn children count')
  notes.expanded = false
  assert.is(visibleAncestor(find(root, ['notes', 'b'])!), notes)
})

test('re-listing after a delete starts at the closest ancestor that surely survived', () => {
  const root = createRoot('/')
  setChildren(root, ['deep', 'keep'])
  setChildren(find(root, ['deep'])!, ['er'])
  setChildren(find(root, ['deep', 'er'])!, ['node'])
  const er = find(root, ['deep', 'er'])!
  assert.is(survivingAncestor(er), root, 'deep holds only er, so it may go too')
  setChildren(find(root, ['deep'])!, ['er', 'other'])
  assert.is(survivingAncestor(er), find(root, ['deep']))
})

test.run()
