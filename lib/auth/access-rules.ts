// json-server-auth's guards (its README, "Guarded routes"): three digits in
// front of a URL, `/600/messages/1`, say who may read and who may write, as a
// file's mode says it for its owner, its group and everyone else. Here the
// owner is the user a document names in its foreign key (`userId`), the group
// every signed-in user, the others everyone. Only the digits json-server-auth
// routes are guards; `/601/…` is an ordinary path.

/** Who may do something: everyone, a signed-in user, the document's owner, or nobody. */
export type Audience = 'everyone' | 'signed-in' | 'owner' | 'nobody'

export interface AccessRule {
  /** The guard as written, `600`. */
  guard: string
  read: Audience
  write: Audience
}

/** json-server-auth 2.1's guards router, each guard's read and write. */
const RULES: Record<string, Omit<AccessRule, 'guard'>> = {
  666: { read: 'everyone', write: 'everyone' },
  664: { read: 'everyone', write: 'signed-in' },
  660: { read: 'signed-in', write: 'signed-in' },
  644: { read: 'everyone', write: 'owner' },
  640: { read: 'signed-in', write: 'owner' },
  600: { read: 'owner', write: 'owner' },
  444: { read: 'everyone', write: 'nobody' },
  440: { read: 'signed-in', write: 'nobody' },
  400: { read: 'owner', write: 'nobody' },
}

/** The rule a path's first segment names, when it is one of json-server-auth's guards. */
export function accessRuleOf(segment: string | undefined): AccessRule | undefined {
  if (segment === undefined || !Object.hasOwn(RULES, segment)) return undefined
  return { guard: segment, ...RULES[segment] }
}

/** Whether a routes.json value is a guard (`600` or `"600"`) rather than a rewrite target, as json-server-auth tells them apart. */
export function isGuard(value: unknown): boolean {
  return (typeof value === 'number' || typeof value === 'string') && /^[640]{3}$/.test(String(value))
}

/**
 * json-server-auth's `parseGuardsRules`: a resource given a guard, `{ "users": 600 }`,
 * becomes the rewrite rule `{ "/users*": "/600/users$1" }`; any other rule stays as it is,
 * so one routes.json may hold both forms.
 */
export function guardRewriteRules(rules: Record<string, unknown>): Record<string, unknown> {
  const rewritten: Record<string, unknown> = {}
  for (const [resource, value] of Object.entries(rules)) {
    if (isGuard(value)) rewritten[`/${resource}*`] = `/${String(value)}/${resource}$1`
    else rewritten[resource] = value
  }
  return rewritten
}
