import { register } from 'node:module'

// openapi-typescript runs on the TypeScript 5 compiler API; the project's own `typescript` is the
// native compiler, which has none. Importing this module sends openapi-typescript's imports of
// `typescript` to the typescript5 alias, for the specs that generate a client's types with it.
register(
  'data:text/javascript,' +
    encodeURIComponent(`export async function resolve(specifier, context, next) {
  if (specifier === 'typescript' && context.parentURL?.includes('/openapi-typescript/')) return next('typescript5', context)
  return next(specifier, context)
}`),
)
