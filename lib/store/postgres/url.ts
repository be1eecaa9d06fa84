/** True for a store location that names a PostgreSQL database rather than a folder. */
export function isPostgresUrl(location: string): boolean {
  return /^postgres(?:ql)?:\/\//i.test(location)
}

/** The connection string with its password, if any, replaced by `***`: what the log may show. */
export function redactUrl(url: string): string {
  // Up to the last `@` of the authority: a password may hold an `@` of its own.
  return url.replace(/^(postgres(?:ql)?:\/\/[^:@/?#]*):[^/?#]*@/i, '$1:***@').replace(/([?&]password=)[^&#]*/gi, '$1***')
}
