/**
 * `node --import tsx bench/json-exact.ts`: what the exact-number and
 * duplicate-key check (lib/json/syntax.ts, inexactJson) adds to JSON.parse,
 * on a typical 1 KB body and on a 1 MB one (numbers, strings, nesting).
 */
import { inexactJson } from '../lib/json/syntax.ts'

function sampleDoc(items: number): unknown {
  return {
    title: 'A playlist of songs',
    owner: { name: 'Ada Lovelace', age: 36, score: 98.25, tags: ['math', 'engines', 'poetry'] },
    songs: Array.from({ length: items }, (_, index) => ({
      id: index,
      title: `Song number ${index} with a "quote" and a \\ backslash`,
      seconds: 180 + (index % 97),
      rating: (index % 50) / 10,
      plays: 1_000_000 + index * 7919,
      explicit: index % 3 === 0,
      album: null,
    })),
  }
}

function measure(label: string, text: string): void {
  const rounds = Math.max(5, Math.round(2_000_000 / text.length))
  const run = (check: boolean) => {
    const started = process.hrtime.bigint()
    for (let round = 0; round < rounds; round++) {
      const value = JSON.parse(text)
      if (check && inexactJson(text, value).length > 0) throw new Error('sample is not exact')
    }
    return Number(process.hrtime.bigint() - started) / 1e3 / rounds
  }
  run(true) // warm up
  const parse = Math.min(run(false), run(false), run(false))
  const both = Math.min(run(true), run(true), run(true))
  console.log(`${label} (${text.length} bytes): JSON.parse ${parse.toFixed(1)} µs, with the check ${both.toFixed(1)} µs (+${(both - parse).toFixed(1)} µs, +${Math.round((100 * (both - parse)) / parse)}%)`)
}

measure('1 KB body', JSON.stringify(sampleDoc(5)))
measure('1 MB body', JSON.stringify(sampleDoc(5200)))
