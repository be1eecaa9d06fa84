import { h } from './dom.js'

/**
 * Pretty JSON as DOM nodes with a class per token kind, for colouring.
 * Built from the parsed value, so it always matches JSON.stringify(value, null, 2).
 */
export function renderJson(value) {
  const root = h('code', { class: 'json' })
  appendValue(root, value, '')
  return root
}

function appendValue(parent, value, indent) {
  if (value === null) return parent.append(h('span', { class: 'j-null' }, 'null'))
  if (typeof value === 'string') return parent.append(h('span', { class: 'j-string' }, JSON.stringify(value)))
  if (typeof value === 'number') return parent.append(h('span', { class: 'j-number' }, String(value)))
  if (typeof value === 'boolean') return parent.append(h('span', { class: 'j-boolean' }, String(value)))

  const isArray = Array.isArray(value)
  const entries = isArray ? value.map((item) => [null, item]) : Object.entries(value)
  const [open, close] = isArray ? ['[', ']'] : ['{', '}']
  if (entries.length === 0) return parent.append(open + close)

  const inner = indent + '  '
  parent.append(open + '\n')
  entries.forEach(([key, item], index) => {
    parent.append(inner)
    if (key !== null) parent.append(h('span', { class: 'j-key' }, JSON.stringify(key)), ': ')
    appendValue(parent, item, inner)
    parent.append(index < entries.length - 1 ? ',\n' : '\n')
  })
  parent.append(indent + close)
}
