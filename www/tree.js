import { apiUrl, decodePath, encodePath } from './api.js'
import { h } from './dom.js'

/** Above this many children, their own child lists are not fetched ahead of time. */
const PREFETCH_LIMIT = 60
/** Most children drawn under one node; the rest are summarized in one line. */
const RENDER_LIMIT = 300

/**
 * The live tree of the store: an ARIA tree (arrow keys move, Enter picks)
 * that loads each node's children with `GET <node>?_children` when it opens,
 * and follows every change through the Server-Sent Events stream at the root.
 *
 * A node: { segments, name, parent, children: Node[] | null (not loaded yet),
 *           expanded, element, row, group }.
 */
export function createTree(container, { base, onSelect, onLiveChange, onProblem }) {
  const treeElement = h('ul', { role: 'tree', class: 'tree', 'aria-label': 'Nodes in the store' })
  const nodeOf = new WeakMap()
  const root = makeNode([], null)
  root.expanded = true
  root.element.tabIndex = 0
  treeElement.append(root.element)
  container.replaceChildren(treeElement)

  function makeNode(segments, parent) {
    const node = { segments, name: segments.at(-1) ?? base, parent, children: null, expanded: false, loading: null }
    node.row = h('div', { class: 'tree-row', style: `--depth: ${segments.length}` },
      h('span', { class: 'tree-chevron', 'aria-hidden': 'true' }),
      h('span', { class: segments.length ? 'tree-label' : 'tree-label tree-root' }, node.name),
      h('span', { class: 'tree-count', 'aria-hidden': 'true' }),
    )
    node.group = h('ul', { role: 'group', class: 'tree-group', hidden: true })
    node.element = h('li', { role: 'treeitem', tabindex: '-1', 'aria-level': segments.length + 1, 'aria-selected': 'false' }, node.row, node.group)
    nodeOf.set(node.element, node)
    return node
  }

  function pathOf(node) {
    return encodePath(node.segments)
  }

  /** Redraws one node's row and the list of its children, moving no element that keeps its place (so focus stays). */
  function update(node) {
    const expandable = node.children === null || node.children.length > 0
    if (expandable) node.element.setAttribute('aria-expanded', String(node.expanded))
    else node.element.removeAttribute('aria-expanded')
    node.row.classList.toggle('loading', Boolean(node.loading) && node.expanded)
    const count = node.row.querySelector('.tree-count')
    count.textContent = node.children?.length && !node.expanded ? String(node.children.length) : ''
    node.element.setAttribute('aria-label', node.children?.length ? `${node.name}, ${node.children.length} inside` : node.name)

    const showChildren = node.expanded && node.children !== null && node.children.length > 0
    node.group.hidden = !showChildren
    if (!showChildren) return
    const shown = node.children.slice(0, RENDER_LIMIT)
    const keep = new Set(shown.map((child) => child.element))
    for (const element of [...node.group.children]) {
      if (keep.has(element)) continue
      if (element.contains(document.activeElement)) focusNode(node)
      element.remove()
    }
    shown.forEach((child, index) => {
      const current = node.group.children[index]
      if (current !== child.element) node.group.insertBefore(child.element, current ?? null)
    })
    if (node.children.length > RENDER_LIMIT) {
      node.group.append(h('li', { role: 'none', class: 'tree-more' }, `…and ${node.children.length - RENDER_LIMIT} more`))
    }
  }

  /** Fetches the names of a node's children, once. Resolves to false when the node is gone. */
  function load(node, { force = false } = {}) {
    if (node.children !== null && !force) return Promise.resolve(true)
    if (node.loading) return node.loading
    node.loading = fetchChildNames(node).then((names) => {
      node.loading = null
      if (names === undefined) {
        removeNode(node)
        return false
      }
      setChildren(node, names)
      return true
    })
    update(node)
    return node.loading
  }

  async function fetchChildNames(node) {
    const known = node.children?.map((child) => child.name) ?? []
    let response
    try {
      response = await fetch(apiUrl(base, pathOf(node)) + '?_children', { cache: 'no-store', headers: { Accept: 'application/json' } })
    } catch {
      return known // The server is away; the live connection reports it, and a refresh follows the reconnect.
    }
    // The root always exists, even when an empty store answers 404 for it.
    if (response.status === 404) return node.parent ? undefined : []
    const names = await response.json().catch(() => undefined)
    if (!response.ok || !Array.isArray(names) || names.some((name) => typeof name !== 'string')) {
      onProblem?.(`Could not list what is inside ${pathOf(node)}: GET ${apiUrl(base, pathOf(node))}?_children answered ${response.status} without a list of names.`)
      return known
    }
    if (!node.parent) onProblem?.(undefined)
    return names
  }

  /** Makes `node.children` match `names`, keeping the nodes (and their open state) that stay. */
  function setChildren(node, names) {
    const existing = new Map((node.children ?? []).map((child) => [child.name, child]))
    node.children = names.map((name) => existing.get(name) ?? makeNode([...node.segments, name], node))
    update(node)
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

  function removeNode(node) {
    const parent = node.parent
    if (!parent?.children) return
    if (node.element.contains(document.activeElement)) focusNode(parent)
    parent.children = parent.children.filter((child) => child !== node)
    node.element.remove()
    update(parent)
  }

  function insertChild(parent, name) {
    const child = makeNode([...parent.segments, name], parent)
    const at = parent.children.findIndex((other) => other.name > name)
    parent.children.splice(at === -1 ? parent.children.length : at, 0, child)
    return child
  }

  /** Walks to a path, adding the nodes an event says now exist; returns the deepest known node. */
  function reveal(segments) {
    let node = root
    for (let index = 0; index < segments.length; index++) {
      if (node.children === null) return node
      let child = node.children.find((other) => other.name === segments[index])
      if (!child) {
        child = insertChild(node, segments[index])
        // A new last node has nothing below it; a new node on the way has at least the next one.
        if (index === segments.length - 1) child.children = []
        update(child)
        update(node)
      }
      node = child
    }
    return node
  }

  function deepestKnown(segments) {
    let node = root
    for (const name of segments) {
      const child = node.children?.find((other) => other.name === name)
      if (!child) break
      node = child
    }
    return node
  }

  function find(segments) {
    let node = root
    for (const name of segments) {
      node = node.children?.find((other) => other.name === name)
      if (!node) return undefined
    }
    return node
  }

  /**
   * After a delete the store prunes ancestors left with neither document nor
   * children, so `node` may be gone. Re-list from the closest ancestor that
   * surely survived (the root, or one with other children) down to `node`:
   * asking only nodes that exist keeps the console free of 404s.
   */
  async function recheck(node) {
    let top = node
    while (top.parent?.parent && top.parent.children?.length === 1) top = top.parent
    let current = top.parent ?? top
    while (current) {
      const names = await fetchChildNames(current)
      if (names === undefined) return
      setChildren(current, names)
      if (current === node) return
      const nextName = node.segments[current.segments.length]
      current = current.children.find((child) => child.name === nextName)
    }
  }

  function visibleAncestor(node) {
    let visible = node
    for (let above = node.parent; above; above = above.parent) if (!above.expanded) visible = above
    return visible
  }

  function flash(node) {
    const row = visibleAncestor(node).row
    row.classList.remove('flash')
    void row.offsetWidth // restart the animation
    row.classList.add('flash')
  }

  function applyEvent(type, payload) {
    const segments = decodePath(payload.path ?? '/')
    if (type === 'delete') {
      const node = find(segments)
      if (node === root) return setChildren(root, [])
      if (node) removeNode(node)
      const closest = node ? node.parent : deepestKnown(segments)
      flash(closest)
      if (closest !== root && !closest.children?.length) recheck(closest)
      return
    }
    flash(reveal(segments))
  }

  /** Re-reads every list already loaded: after a reconnect, events may have been missed. */
  async function refresh(node = root) {
    if (node.children === null) return
    if (!(await load(node, { force: true }))) return
    await Promise.all(node.children.map((child) => refresh(child)))
  }

  // Keyboard: the WAI-ARIA tree pattern, with one tab stop for the whole tree.
  function visibleNodes() {
    const list = []
    const walk = (node) => {
      list.push(node)
      if (node.expanded && node.children) node.children.slice(0, RENDER_LIMIT).forEach(walk)
    }
    walk(root)
    return list
  }

  function focusNode(node) {
    for (const item of treeElement.querySelectorAll('[role=treeitem][tabindex="0"]')) item.tabIndex = -1
    node.element.tabIndex = 0
    node.element.focus()
  }

  function select(node) {
    for (const item of treeElement.querySelectorAll('[aria-selected=true]')) item.setAttribute('aria-selected', 'false')
    node.element.setAttribute('aria-selected', 'true')
    focusNode(node)
    onSelect(pathOf(node))
  }

  treeElement.addEventListener('keydown', (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return
    const node = nodeOf.get(event.target)
    if (!node) return
    const visible = visibleNodes()
    const index = visible.indexOf(node)
    const expandable = node.children === null || node.children.length > 0
    switch (event.key) {
      case 'ArrowDown': if (visible[index + 1]) focusNode(visible[index + 1]); break
      case 'ArrowUp': if (visible[index - 1]) focusNode(visible[index - 1]); break
      case 'Home': focusNode(visible[0]); break
      case 'End': focusNode(visible.at(-1)); break
      case 'ArrowRight':
        if (expandable && !node.expanded) expand(node)
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

  // Live updates: one EventSource at the API root sees every change.
  let source
  let retryDelay = 1000
  let connectedBefore = false

  function connect() {
    source = new EventSource(apiUrl(base, '/'))
    source.addEventListener('open', () => {
      onLiveChange('live')
      retryDelay = 1000
      if (connectedBefore) refresh()
      connectedBefore = true
    })
    for (const type of ['put', 'patch', 'delete']) {
      source.addEventListener(type, (event) => {
        try {
          applyEvent(type, JSON.parse(event.data))
        } catch {
          // An event we cannot read changes nothing we show; the next refresh catches up.
        }
      })
    }
    source.addEventListener('error', () => {
      if (source.readyState === EventSource.CONNECTING) {
        onLiveChange('reconnecting')
        return
      }
      // The browser gave up (the server answered something other than a stream): retry quietly, slower each time.
      onLiveChange('offline')
      source.close()
      setTimeout(connect, retryDelay)
      retryDelay = Math.min(retryDelay * 2, 30000)
    })
  }

  update(root)
  expand(root)
  connect()

  return {
    refresh: () => refresh(),
    close: () => source?.close(),
  }
}
