/**
 * The word of `candidates` a mistyped one most likely meant (`prot` → `port`), or undefined
 * when none is near: at most two edits away, and fewer than half the word's letters.
 */
export function nearestWord(typed: string, candidates: readonly string[]): string | undefined {
  let best: { word: string; distance: number } | undefined
  for (const word of candidates) {
    const distance = editDistance(typed.toLowerCase(), word)
    if (best === undefined || distance < best.distance) best = { word, distance }
  }
  if (best === undefined || best.distance > 2 || best.distance * 2 >= typed.length) return undefined
  return best.word
}

/**
 * Insertions, deletions, substitutions and swaps of two neighbouring letters that turn `from`
 * into `to` (the optimal string alignment distance): a swap (`prot`) is one typo, as it is to the typist.
 */
function editDistance(from: string, to: string): number {
  const rows: number[][] = Array.from({ length: from.length + 1 }, (_, row) => [row, ...Array<number>(to.length).fill(0)])
  for (let column = 1; column <= to.length; column++) rows[0][column] = column
  for (let row = 1; row <= from.length; row++) {
    for (let column = 1; column <= to.length; column++) {
      const substitution = from[row - 1] === to[column - 1] ? 0 : 1
      rows[row][column] = Math.min(rows[row - 1][column] + 1, rows[row][column - 1] + 1, rows[row - 1][column - 1] + substitution)
      if (row > 1 && column > 1 && from[row - 1] === to[column - 2] && from[row - 2] === to[column - 1]) {
        rows[row][column] = Math.min(rows[row][column], rows[row - 2][column - 2] + 1)
      }
    }
  }
  return rows[from.length][to.length]
}
