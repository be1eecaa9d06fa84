import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { jsonServer1Package } from '../../bench/json-server-1/install.ts'
import { pluralOf, pluralOfInflection, singularOf, singularOfInflection } from '../../lib/listing/plurals.ts'
import { plural, singular } from '../../lib/listing/relations.ts'
import { seeded, seedFrom } from '../support/random.ts'

// json-server's plurals (docs/json-server.md, "The json-server mode"): restdir's
// lib/listing/plurals.ts against the `pluralize` package 0.17 itself calls, and against the
// `inflection` package 1.0 calls, word by word. The words: every word each package's source
// names (its irregular words, its uncountables, the stems of its rules) with the endings
// its rules turn on, in three cases, common nouns of data sets, and random words.
//
// Replay a run: PLURALS_SEED=<the seed it printed> node spec/run.mjs listing/plurals

const require = createRequire(import.meta.url)
const pluralize = require('pluralize') as ((word: string) => string) & { singular(word: string): string; plural(word: string): string }
const source = readFileSync(require.resolve('pluralize'), 'utf8')
const SEED = seedFrom('PLURALS_SEED')

const ENDINGS = ['', 's', 'es', 'us', 'i', 'a', 'ae', 'um', 'on', 'ix', 'ex', 'ices', 'y', 'ies', 'ey', 'ie', 'f', 'fe', 'ves', 'o', 'oes', 'is', 'ses', 'sis', 'x', 'ren', 'man', 'men', 'ouse', 'ice', 'ese', 'eau', 'eaux', 'im', 'ss', 'sh', 'ch', 'zz', 'son', 'ople']

const NOUNS = [
  'post', 'comment', 'user', 'profile', 'album', 'photo', 'todo', 'task', 'category', 'company', 'address', 'status',
  'bus', 'box', 'match', 'wish', 'quiz', 'person', 'child', 'man', 'woman', 'mouse', 'goose', 'tooth', 'foot', 'ox',
  'sheep', 'deer', 'fish', 'news', 'series', 'species', 'media', 'data', 'datum', 'index', 'matrix', 'vertex', 'analysis',
  'thesis', 'crisis', 'leaf', 'wolf', 'knife', 'wife', 'life', 'hero', 'potato', 'tomato', 'echo', 'piano', 'radio',
  'city', 'day', 'key', 'toy', 'monkey', 'money', 'movie', 'cookie', 'pie', 'tie', 'invoice', 'order', 'product', 'item',
  'cart', 'review', 'rating', 'tag', 'author', 'book', 'library', 'story', 'entry', 'query', 'reply', 'property', 'agency',
  'criterion', 'phenomenon', 'cactus', 'fungus', 'alumnus', 'syllabus', 'appendix', 'bureau', 'chateau', 'virus', 'campus',
  'census', 'genus', 'octopus', 'bonus', 'menu', 'emu', 'gas', 'atlas', 'canvas', 'alias', 'iris', 'axis', 'test', 'process',
  'class', 'glass', 'business', 'access', 'settings', 'equipment', 'information', 'software', 'staff', 'police', 'pokemon',
  'chinese', 'reindeer', 'blowfish', 'smallpox', 'famous', 'people', 'children', 'men', 'women', 'mice', 'geese', 'teeth',
  'feet', 'oxen', 'indices', 'matrices', 'vertices', 'analyses', 'leaves', 'wolves', 'knives', 'wives', 'lives', 'heroes',
  'cities', 'days', 'keys', 'movies', 'cookies', 'zombies', 'selfies', 'calves', 'halves', 'shelves', 'thieves', 'I', 'thou',
  'Person', 'PEOPLE', 'ChildRen', 'postId', 'user_id', 'playlists', 'e-mail', 'café', 'naïve', 'über', 'x', 's', 'a', '',
]

/** Every lower-case word of two letters or more that a package's code (not its comments) names, with each ending. */
function wordsOfTheRules(code: string): string[] {
  const stems = new Set(code.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '').match(/[a-z]{2,}/g) ?? [])
  const words = new Set<string>()
  for (const stem of stems) {
    for (const ending of ENDINGS) {
      const word = stem + ending
      words.add(word)
      words.add(word[0].toUpperCase() + word.slice(1))
      words.add(word.toUpperCase())
    }
  }
  return [...words]
}

function randomWords(count: number): string[] {
  const random = seeded(SEED)
  const words: string[] = []
  for (let i = 0; i < count; i++) words.push(random.text(random.between(0, 6), 'abcdefghijklmnopqrstuvwxyzAEIOUY_-é') + random.pick(ENDINGS))
  return words
}

test("restdir's plurals and singulars are pluralize's, over every word its rules name, common nouns and random words", () => {
  const words = [...new Set([...NOUNS, ...wordsOfTheRules(source), ...randomWords(5000)])]
  // The package's source names its rules' words: a list this short means the reading broke.
  assert.ok(words.length > 20000, `${words.length} words`)
  const differing: string[] = []
  for (const word of words) {
    if (singularOf(word) !== pluralize.singular(word)) differing.push(`singular ${JSON.stringify(word)}: restdir ${JSON.stringify(singularOf(word))}, pluralize ${JSON.stringify(pluralize.singular(word))}`)
    if (pluralOf(word) !== pluralize(word)) differing.push(`plural ${JSON.stringify(word)}: restdir ${JSON.stringify(pluralOf(word))}, pluralize ${JSON.stringify(pluralize(word))}`)
  }
  assert.equal(differing.slice(0, 20), [], `seed ${SEED}: ${differing.length} of ${words.length} words differ`)
})

test("1.0's plurals and singulars are inflection's, over every word its rules name, common nouns and random words", async () => {
  const file = join(await jsonServer1Package(), '..', 'inflection', 'lib', 'inflection.js')
  const inflection = (await import(pathToFileURL(file).href)) as { singularize(word: string): string; pluralize(word: string): string }
  const words = [...new Set([...NOUNS, ...wordsOfTheRules(readFileSync(file, 'utf8')), ...randomWords(5000)])]
  assert.ok(words.length > 20000, `${words.length} words`)
  const differing: string[] = []
  for (const word of words) {
    if (singularOfInflection(word) !== inflection.singularize(word)) differing.push(`singular ${JSON.stringify(word)}: restdir ${JSON.stringify(singularOfInflection(word))}, inflection ${JSON.stringify(inflection.singularize(word))}`)
    if (pluralOfInflection(word) !== inflection.pluralize(word)) differing.push(`plural ${JSON.stringify(word)}: restdir ${JSON.stringify(pluralOfInflection(word))}, inflection ${JSON.stringify(inflection.pluralize(word))}`)
  }
  assert.equal(differing.slice(0, 20), [], `seed ${SEED}: ${differing.length} of ${words.length} words differ`)
})

test("the json-server mode's names go by them, restdir's own by the English rule", () => {
  for (const [many, one] of [['people', 'person'], ['children', 'child'], ['sheep', 'sheep'], ['news', 'news'], ['categories', 'category'], ['posts', 'post']]) {
    assert.is(singular(many, 'pluralize'), one, `singular(${many}) in the mode`)
    assert.is(plural(one, 'pluralize'), many, `plural(${one}) in the mode`)
  }
  assert.is(singular('heroes', 'inflection'), 'hero')
  assert.is(plural('hero', 'inflection'), 'heros', "1.0's own plural")
  assert.is(singular('people'), 'people', 'the English rule leaves people as it is')
  assert.is(plural('person'), 'persons')
})

test.run()
