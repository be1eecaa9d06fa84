import { encodePath } from './api.js'
import { h } from './dom.js'
import { applyEvent, createRoot, isExpandable, removeNode, setChildren, survivingAncestor, visibleAncestor, visibleNodes } from './tree-model.js'
import { fetchChildNames, watchChanges } from './tree-source.js'

/** Above this many children, their own child lists are not fetched ahead of time. */
const PREFETCH_LIMIT = 60
/** Most children drawn under one node; the rest are summarized in one line. */
const RENDER_LIMIT = 300

/**
 * The live tree of the store on the page: an ARIA tree (arrow keys move,
 * Enter picks) that loads each node's children when it opens and follows
 * every change in the store. The nodes are tree-model.js's; this module draws
 * them and turns keys and clicks into opening, closing and picking.
 */
export function createTree(container, { base, onSelect, onLiveChange, onProblem }) {
  const treeElement = h('ul', { role: 'tree', class: 'tree', 'aria-label': 'Nodes in the store' })
  /** Each node's elements { element, row, group }, made when first drawn. */
  const views = new WeakMap()
  const nodeOf = new WeakMap()
  const root = createRoot(base)
  viewOf(root).element.tabIndex = 0
  treeElement.append(viewOf(root).element)
  container.replaceChildren(treeElement)

  function viewOf(node) {
    let view = views.get(node)
    if (view) return view
    const depth = node.segments.length
    const row = h('div', { class: 'tree-row', style: `--depth: ${depth}` },
      h('span', { class: 'tree-chevron', 'aria-hidden': 'true' }),
      h('span', { class: depth ? 'tree-label' : 'tree-label tree-root' }, node.name),
      h('span', { class: 'tree-count', 'aria-hidden': 'true' }),
    )
    const group = h('ul', { role: 'group', class: 'tree-group', hidden: true })
    const element = h('li', { role: 'treeitem', tabindex: '-1', 'aria-level': depth + 1, 'aria-selected': 'false' }, row, group)
    view = { element, row, group }
    views.set(node, view)
    nodeOf.set(element, node)
    return view
  }

  const pathOf = (node) => encodePath(node.segments)

  /** Redraws one node's row and the list of its children, moving no element that keeps its place (so focus stays). */
  function update(node) {
    const { element, row, group } = viewOf(node)
    if (isExpandable(node)) element.setAttribute('aria-expanded', String(node.expanded))
    else element.removeAttribute('aria-expanded')
    row.classList.toggle('loading', Boolean(node.loading) && node.expanded)
    const count = row.querySelector('.tree-count')
    count.textContent = node.children?.length && !node.expanded ? String(node.children.length) : ''
    element.setAttribute('aria-label', node.children?.length ? `${node.name}, ${node.children.length} inside` : node.name)

    const showChildren = node.expanded && node.children !== null && node.children.length > 0
    group.hidden = !showChildren
    if (!showChildren) return
    const shown = node.children.slice(0, RENDER_LIMIT).map((child) => viewOf(child).element)
    const keep = new Set(shown)
    for (const childElement of [...group.children]) {
      if (keep.has(childElement)) continue
      if (childElement.contains(document.activeElement)) focusNode(node)
      childElement.remove()
    }
    shown.forEach((childElement, index) => {
      const current = group.children[index]
      if (current !== childElement) group.insertBefore(childElement, current ?? null)
    })
    if (node.children.length > RENDER_LIMIT) {
      group.append(h('li', { role: 'none', class: 'tree-more' }, `…and ${node.children.length - RENDER_LIMIT} more`))
    }
  }

  function listChildren(node) {
    return fetchChildNames(base, node.segments, { known: node.children?.map((child) => child.name) ?? [], onProblem })
  }

  /** Fetches the names of a node's children, once. Resolves to false when the node is gone. */
  function load(node, { force = false } = {}) {
    if (node.children !== null && !force) return Promise.resolve(true)
    if (node.loading) return node.loading
    node.loading = listChildren(node).then((names) => {
      node.loading = null
      if (names === undefined) {
        takeOff(node)
        return false
      }
      setChildren(node, names)
      update(node)
      return true
    })
    update(node)
    return node.loading
  }

  async function expand(node) {
    node.expanded = true
    update(node)
    if (!(await load(node))) return
    update(node)
    // Load one level ahead so every visible row knows whether it can open.
    if (node.children.length <= PREFETCH_LIMIT) {
      await Promise.all(node.children.map((child) => load(child)))
    }
  }

  function collapse(node) {
    node.expanded = false
    update(node)
  }

  /** Takes a node that is gone off the tree and the page. */
  function takeOff(node) {
    if (!node.parent?.children) return
    moveFocusOut(node)
    removeNode(node)
    viewOf(node).element.remove()
    update(node.parent)
  }

  /** Focus inside a node about to go moves to its parent. */
  function moveFocusOut(node) {
    if (node.parent && viewOf(node).element.contains(document.activeElement)) focusNode(node.parent)
  }

  /** Re-lists from the closest ancestor that surely survived a delete down to `node` (see survivingAncestor). */
  async function recheck(node) {
    let current = survivingAncestor(node)
    while (current) {
      const names = await listChildren(current)
      if (names === undefined) return
      setChildren(current, names)
      update(current)
      if (current === node) return
      const nextName = node.segments[current.segments.length]
      current = current.children.find((child) => child.name === nextName)
    }
  }

  function flash(node) {
    const { row } = viewOf(visibleAncestor(node))
    row.classList.remove('flash')
    void row.offsetWidth // restart the animation
    row.classList.add('flash')
  }

  function showChange(type, payload) {
    const { changed, removed, flash: touched, recheck: relist } = applyEvent(root, type, payload)
    if (removed) {
      moveFocusOut(removed)
      viewOf(removed).element.remove()
    }
    for (const node of changed) update(node)
    if (touched) flash(touched)
    if (relist) recheck(relist)
  }

  /** Re-reads every list already loaded: after a gap in the events, what is shown may be out of date. */
  async function refresh(node = root) {
    if (node.children === null) return
    if (!(await load(node, { force: true }))) return
    await Promise.all(node.children.map((child) => refresh(child)))
  }

  // Keyboard: the WAI-ARIA tree pattern, with one tab stop for the whole tree.
  function focusNode(node) {
    for (const item of treeElement.querySelectorAll('[role=treeitem][tabindex="0"]')) item.tabIndex = -1
    const { element } = viewOf(node)
    element.tabIndex = 0
    element.focus()
  }

  function select(node) {
    for (const item of treeElement.querySelectorAll('[aria-selected=true]')) item.setAttribute('aria-selected', 'false')
    viewOf(node).element.setAttribute('aria-selected', 'true')
    focusNode(node)
    onSelect(pathOf(node))
  }

  treeElement.addEventListener('keydown', (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return
    const node = nodeOf.get(event.target)
    if (!node) return
    const visible = visibleNodes(root, RENDER_LIMIT)
    const index = visible.indexOf(node)
    switch (event.key) {
      case 'ArrowDown': if (visible[index + 1]) focusNode(visible[index + 1]); break
      case 'ArrowUp': if (visible[index - 1]) focusNode(visible[index - 1]); break
      case 'Home': focusNode(visible[0]); break
      case 'End': focusNode(visible.at(-1)); break
      case 'ArrowRight':
        if (isExpandable(node) && !node.expanded) expand(node)
        else if (node.expanded && node.children?.length) focusNode(node.children[0])
        break
      case 'ArrowLeft':
        if (node.expanded && node.parent) collapse(node)
        else if (node.parent) focusNode(node.parent)
        break
      case 'Enter':
      case ' ':
        select(node)
        break
      default:
        return
    }
    event.preventDefault()
  })

  treeElement.addEventListener('click', (event) => {
    const row = event.target.closest('.tree-row')
    if (!row) return
    const node = nodeOf.get(row.parentElement)
    if (event.target.closest('.tree-chevron')) {
      if (node.expanded && node.parent) collapse(node)
      else expand(node)
      focusNode(node)
      return
    }
    select(node)
    if (!node.expanded) expand(node)
  })

  update(root)
  expand(root)
  const changes = watchChanges(base, { onChange: showChange, onLiveChange, onGap: () => refresh() })

  return {
    refresh: () => refresh(),
    close: () => changes.close(),
  }
}
