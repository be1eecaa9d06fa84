/*
 * Declared families as the stores need them (docs/http-api.md, "Declaring
 * resources"): a collection's name, its members' id field and the family that
 * owns it. lib/data/declarations.ts's Family has these fields and more; both
 * find a family by its path here.
 */

/** A declared family as the stores need it. */
export interface NestedFamily {
  collection: string
  idField: string
  parent?: NestedFamily
}

/** The family a collection path's segments name (`['user', '7', 'playlist']`), if one does. */
export function familyAt<F extends { collection: string; parent?: F }>(families: readonly F[], collection: readonly string[]): F | undefined {
  let family: F | undefined
  for (let index = 0; index < collection.length; index += 2) {
    const owner = family
    family = families.find((candidate) => candidate.parent === owner && candidate.collection === collection[index])
    if (!family) return undefined
  }
  return family
}

/** The families whose collections lie below each member of `family` (below the root: the top-level ones). */
export function childrenOf<F extends { parent?: F }>(families: readonly F[], family: F | undefined): F[] {
  return families.filter((candidate) => candidate.parent === family)
}
