/**
 * A tiny element builder, so modules never assemble HTML from strings:
 * every piece of text from the server lands in a text node, never in markup.
 *
 *   h('button', { type: 'button', class: 'chip', onclick: go }, 'Send')
 */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag)
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue
    if (name.startsWith('on') && typeof value === 'function') {
      element.addEventListener(name.slice(2), value)
    } else if (name === 'class') {
      element.className = value
    } else {
      element.setAttribute(name, value === true ? '' : String(value))
    }
  }
  appendChildren(element, children)
  return element
}

function appendChildren(element, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue
    if (Array.isArray(child)) appendChildren(element, child)
    else element.append(child instanceof Node ? child : String(child))
  }
}

/** Replaces an element's content with the given children. */
export function fill(element, ...children) {
  element.replaceChildren()
  appendChildren(element, children)
  return element
}
