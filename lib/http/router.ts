import { splitPath, type PathLimits, defaultPathLimits } from '../path.ts'

/** Path variables of a match, by name, percent-decoded. Null-prototype: a `:__proto__` param is plain data. */
export type Params = Record<string, string>

/** A pattern and the methods it answers, in the order they were added (`HEAD` and `OPTIONS` are implied). */
export interface ListedRoute {
  pattern: string
  methods: string[]
}

/** A path that matched a pattern; `handler` is undefined when the method is not one of `allow`. */
export interface RouteMatch<Handler> {
  handler: Handler | undefined
  params: Params
  allow: string[]
}

interface Node<Handler> {
  /** Children by literal segment. */
  literals: Map<string, Node<Handler>>
  /** The `:name` child, if any; one per position keeps matching unambiguous. */
  variable?: { name: string; node: Node<Handler> }
  /** Handlers by method, for a pattern ending here. */
  handlers: Map<string, Handler>
  /** The `Allow` list for this node, worked out once at `add` rather than on every request. */
  allow: string[]
}

function newNode<Handler>(): Node<Handler> {
  return { literals: new Map(), handlers: new Map(), allow: [] }
}

/**
 * A tree of path patterns such as `/user/:user_id/playlist`, matched segment
 * by segment: literals first, then the `:variable` at that depth. Routes
 * match on method and path; HEAD falls back to GET.
 */
export class Router<Handler> {
  private readonly root: Node<Handler> = newNode()
  private readonly limits: PathLimits
  /** The pattern each route's node was first added as, in order (a Map keeps insertion order). */
  private readonly patterns = new Map<Node<Handler>, string>()

  constructor(limits: PathLimits = defaultPathLimits) {
    this.limits = limits
  }

  /** Adds a handler for one or more methods on a pattern. */
  add(methods: string | string[], pattern: string, handler: Handler): this {
    let node = this.root
    for (const segment of patternSegments(pattern)) {
      if (segment.startsWith(':')) {
        const name = segment.slice(1)
        if (!/^[A-Za-z_$][\w$]*$/.test(name)) throw new Error(`Route ${pattern}: "${segment}" is not a valid variable name.`)
        if (node.variable && node.variable.name !== name) {
          throw new Error(`Route ${pattern}: ":${name}" clashes with ":${node.variable.name}" at the same position.`)
        }
        node.variable ??= { name, node: newNode() }
        node = node.variable.node
      } else {
        let next = node.literals.get(segment)
        if (!next) node.literals.set(segment, (next = newNode()))
        node = next
      }
    }
    for (const method of Array.isArray(methods) ? methods : [methods]) {
      const upper = method.toUpperCase()
      if (node.handlers.has(upper)) throw new Error(`Route ${upper} ${pattern} is declared twice.`)
      node.handlers.set(upper, handler)
    }
    node.allow = allowedMethods(node)
    if (!this.patterns.has(node)) this.patterns.set(node, pattern)
    return this
  }

  /** Every pattern with its methods, in the order added: what a server can tell its user it answers. */
  routes(): ListedRoute[] {
    return [...this.patterns].map(([node, pattern]) => ({ pattern, methods: [...node.handlers.keys()] }))
  }

  /**
   * Matches a request target (path and optional query) for a method.
   * Returns undefined when no pattern matches the path; otherwise the handler
   * (undefined when the path matches but not the method) and the `Allow` list.
   * Throws HttpError 400/414 for a malformed or over-long path.
   */
  find(method: string, target: string): RouteMatch<Handler> | undefined {
    return this.match(method, splitPath(target, this.limits))
  }

  /** Like `find`, for segments already split and decoded by `splitPath`. */
  match(method: string, segments: readonly string[]): RouteMatch<Handler> | undefined {
    const params: Params = Object.create(null)
    const node = this.walk(this.root, segments, 0, params)
    if (!node) return undefined
    const handler = node.handlers.get(method) ?? (method === 'HEAD' ? node.handlers.get('GET') : undefined)
    // A copy: a caller may change its match without changing the route.
    return { handler, params, allow: [...node.allow] }
  }

  private walk(node: Node<Handler>, segments: readonly string[], index: number, params: Params): Node<Handler> | undefined {
    if (index === segments.length) return node.handlers.size > 0 ? node : undefined
    const segment = segments[index]
    const literal = node.literals.get(segment)
    if (literal) {
      const found = this.walk(literal, segments, index + 1, params)
      if (found) return found
    }
    if (node.variable && segment !== '') {
      const found = this.walk(node.variable.node, segments, index + 1, params)
      if (found) {
        params[node.variable.name] = segment
        return found
      }
    }
    return undefined
  }
}

function patternSegments(pattern: string): string[] {
  if (!pattern.startsWith('/')) throw new Error(`Route "${pattern}" must start with "/".`)
  return pattern.split('/').filter((segment) => segment !== '')
}

/** The methods a matched path answers, for `Allow` (RFC 9110 §10.2.1): HEAD with GET, and OPTIONS always. */
function allowedMethods(node: Node<unknown>): string[] {
  const allow = new Set(node.handlers.keys())
  if (allow.has('GET')) allow.add('HEAD')
  allow.add('OPTIONS')
  return [...allow]
}
