/*
 * English plurals as json-server 0.17 makes them: it names a collection's foreign key
 * by `pluralize.singular` (`people` → `personId`) and the collection a key or an
 * `_expand` names by `pluralize` (`childId` → `children`), see docs/json-server.md.
 * These are the rules of the `pluralize` package (8.0.0, MIT, which 0.17 depends on),
 * as data, applied as it applies them: a word kept as it is, then an irregular word,
 * then the last matching rule of its list, in the case of the word it was given.
 */

type Rule = readonly [RegExp, string]

const irregular: ReadonlyArray<readonly [string, string]> = [
  ['I', 'we'], ['me', 'us'], ['he', 'they'], ['she', 'they'], ['them', 'them'],
  ['myself', 'ourselves'], ['yourself', 'yourselves'], ['itself', 'themselves'],
  ['herself', 'themselves'], ['himself', 'themselves'], ['themself', 'themselves'],
  ['is', 'are'], ['was', 'were'], ['has', 'have'], ['this', 'these'], ['that', 'those'],
  ['echo', 'echoes'], ['dingo', 'dingoes'], ['volcano', 'volcanoes'], ['tornado', 'tornadoes'],
  ['torpedo', 'torpedoes'], ['genus', 'genera'], ['viscus', 'viscera'], ['stigma', 'stigmata'],
  ['stoma', 'stomata'], ['dogma', 'dogmata'], ['lemma', 'lemmata'], ['schema', 'schemata'],
  ['anathema', 'anathemata'], ['ox', 'oxen'], ['axe', 'axes'], ['die', 'dice'], ['yes', 'yeses'],
  ['foot', 'feet'], ['eave', 'eaves'], ['goose', 'geese'], ['tooth', 'teeth'], ['quiz', 'quizzes'],
  ['human', 'humans'], ['proof', 'proofs'], ['carve', 'carves'], ['valve', 'valves'],
  ['looey', 'looies'], ['thief', 'thieves'], ['groove', 'grooves'], ['pickaxe', 'pickaxes'],
  ['passerby', 'passersby'],
]

// Lower-cased on both sides; a later pair wins, as in the package (`they` → `she`).
const irregularSingles = new Map<string, string>()
const irregularPlurals = new Map<string, string>()
for (const [single, many] of irregular) {
  irregularSingles.set(single.toLowerCase(), many.toLowerCase())
  irregularPlurals.set(many.toLowerCase(), single.toLowerCase())
}

const pluralRules: Rule[] = [
  [/s?$/i, 's'],
  [/[^\u0000-\u007F]$/i, '$0'],
  [/([^aeiou]ese)$/i, '$1'],
  [/(ax|test)is$/i, '$1es'],
  [/(alias|[^aou]us|t[lm]as|gas|ris)$/i, '$1es'],
  [/(e[mn]u)s?$/i, '$1s'],
  [/([^l]ias|[aeiou]las|[ejzr]as|[iu]am)$/i, '$1'],
  [/(alumn|syllab|vir|radi|nucle|fung|cact|stimul|termin|bacill|foc|uter|loc|strat)(?:us|i)$/i, '$1i'],
  [/(alumn|alg|vertebr)(?:a|ae)$/i, '$1ae'],
  [/(seraph|cherub)(?:im)?$/i, '$1im'],
  [/(her|at|gr)o$/i, '$1oes'],
  [/(agend|addend|millenni|dat|extrem|bacteri|desiderat|strat|candelabr|errat|ov|symposi|curricul|automat|quor)(?:a|um)$/i, '$1a'],
  [/(apheli|hyperbat|periheli|asyndet|noumen|phenomen|criteri|organ|prolegomen|hedr|automat)(?:a|on)$/i, '$1a'],
  [/sis$/i, 'ses'],
  [/(?:(kni|wi|li)fe|(ar|l|ea|eo|oa|hoo)f)$/i, '$1$2ves'],
  [/([^aeiouy]|qu)y$/i, '$1ies'],
  [/([^ch][ieo][ln])ey$/i, '$1ies'],
  [/(x|ch|ss|sh|zz)$/i, '$1es'],
  [/(matr|cod|mur|sil|vert|ind|append)(?:ix|ex)$/i, '$1ices'],
  [/\b((?:tit)?m|l)(?:ice|ouse)$/i, '$1ice'],
  [/(pe)(?:rson|ople)$/i, '$1ople'],
  [/(child)(?:ren)?$/i, '$1ren'],
  [/eaux$/i, '$0'],
  [/m[ae]n$/i, 'men'],
  [/^thou$/i, 'you'],
]

const singularRules: Rule[] = [
  [/s$/i, ''],
  [/(ss)$/i, '$1'],
  [/(wi|kni|(?:after|half|high|low|mid|non|night|[^\w]|^)li)ves$/i, '$1fe'],
  [/(ar|(?:wo|[ae])l|[eo][ao])ves$/i, '$1f'],
  [/ies$/i, 'y'],
  [/\b([pl]|zomb|(?:neck|cross)?t|coll|faer|food|gen|goon|group|lass|talk|goal|cut)ies$/i, '$1ie'],
  [/\b(mon|smil)ies$/i, '$1ey'],
  [/\b((?:tit)?m|l)ice$/i, '$1ouse'],
  [/(seraph|cherub)im$/i, '$1'],
  [/(x|ch|ss|sh|zz|tto|go|cho|alias|[^aou]us|t[lm]as|gas|(?:her|at|gr)o|[aeiou]ris)(?:es)?$/i, '$1'],
  [/(analy|diagno|parenthe|progno|synop|the|empha|cri|ne)(?:sis|ses)$/i, '$1sis'],
  [/(movie|twelve|abuse|e[mn]u)s$/i, '$1'],
  [/(test)(?:is|es)$/i, '$1is'],
  [/(alumn|syllab|vir|radi|nucle|fung|cact|stimul|termin|bacill|foc|uter|loc|strat)(?:us|i)$/i, '$1us'],
  [/(agend|addend|millenni|dat|extrem|bacteri|desiderat|strat|candelabr|errat|ov|symposi|curricul|quor)a$/i, '$1um'],
  [/(apheli|hyperbat|periheli|asyndet|noumen|phenomen|criteri|organ|prolegomen|hedr|automat)a$/i, '$1on'],
  [/(alumn|alg|vertebr)ae$/i, '$1a'],
  [/(cod|mur|sil|vert|ind)ices$/i, '$1ex'],
  [/(matr|append)ices$/i, '$1ix'],
  [/(pe)(rson|ople)$/i, '$1rson'],
  [/(child)ren$/i, '$1'],
  [/(eau)x?$/i, '$1'],
  [/men$/i, 'man'],
]

/** Words with no other number, by name. */
const uncountableWords = new Set([
  'adulthood', 'advice', 'agenda', 'aid', 'aircraft', 'alcohol', 'ammo', 'analytics', 'anime',
  'athletics', 'audio', 'bison', 'blood', 'bream', 'buffalo', 'butter', 'carp', 'cash', 'chassis',
  'chess', 'clothing', 'cod', 'commerce', 'cooperation', 'corps', 'debris', 'diabetes', 'digestion',
  'elk', 'energy', 'equipment', 'excretion', 'expertise', 'firmware', 'flounder', 'fun', 'gallows',
  'garbage', 'graffiti', 'hardware', 'headquarters', 'health', 'herpes', 'highjinks', 'homework',
  'housework', 'information', 'jeans', 'justice', 'kudos', 'labour', 'literature', 'machinery',
  'mackerel', 'mail', 'media', 'mews', 'moose', 'music', 'mud', 'manga', 'news', 'only', 'personnel',
  'pike', 'plankton', 'pliers', 'police', 'pollution', 'premises', 'rain', 'research', 'rice',
  'salmon', 'scissors', 'series', 'sewage', 'shambles', 'shrimp', 'software', 'species', 'staff',
  'swine', 'tennis', 'traffic', 'transportation', 'trout', 'tuna', 'wealth', 'welfare', 'whiting',
  'wildebeest', 'wildlife', 'you',
])

// Words with no other number, by ending: each is a rule of both lists that keeps the word,
// added after the lists, so it is tried before them (the last matching rule wins).
for (const ending of [/pok[eé]mon$/i, /[^aeiou]ese$/i, /deer$/i, /fish$/i, /measles$/i, /o[iu]s$/i, /pox$/i, /sheep$/i]) {
  pluralRules.push([ending, '$0'])
  singularRules.push([ending, '$0'])
}

/** The case of `word` on `token`, as the package restores it. */
function restoreCase(word: string, token: string): string {
  if (word === token) return token
  if (word === word.toLowerCase()) return token.toLowerCase()
  if (word === word.toUpperCase()) return token.toUpperCase()
  if (word[0] === word[0]?.toUpperCase()) return token.charAt(0).toUpperCase() + token.slice(1).toLowerCase()
  return token.toLowerCase()
}

function replace(word: string, [pattern, replacement]: Rule): string {
  return word.replace(pattern, (match: string, ...rest: unknown[]) => {
    // rest: the groups, then the offset, then the whole word.
    const offset = rest[rest.length - 2] as number
    const args = [match, ...rest]
    const result = replacement.replace(/\$(\d{1,2})/g, (_, index: string) => {
      const value = args[Number(index)]
      return typeof value === 'string' && value !== '' ? value : ''
    })
    if (match === '') return restoreCase(word[offset - 1] ?? '', result)
    return restoreCase(match, result)
  })
}

function inflect(word: string, replaceMap: Map<string, string>, keepMap: Map<string, string>, rules: Rule[]): string {
  const token = word.toLowerCase()
  if (keepMap.has(token)) return restoreCase(word, token)
  const direct = replaceMap.get(token)
  if (direct !== undefined) return restoreCase(word, direct)
  if (token === '' || uncountableWords.has(token)) return word
  for (let i = rules.length - 1; i >= 0; i--) {
    if (rules[i][0].test(word)) return replace(word, rules[i])
  }
  return word
}

/** `pluralize.singular`: `people` → `person`, `categories` → `category`, `news` → `news`. */
export function singularOf(word: string): string {
  return inflect(word, irregularPlurals, irregularSingles, singularRules)
}

/** `pluralize(word)`: `person` → `people`, `child` → `children`, `sheep` → `sheep`. */
export function pluralOf(word: string): string {
  return inflect(word, irregularSingles, irregularPlurals, pluralRules)
}

/*
 * json-server 1.0 names them by the `inflection` package instead (3.0, MIT; its service's
 * `_embed` and `_dependent`: `inflection.singularize('people')` → `personId`), whose rules
 * differ (`heros`, `fishes`): its words kept as they are and its rules, as data, applied as
 * it applies them, the first matching rule of the list, a rule without a replacement
 * keeping the word.
 */

/** Words with no other number. */
const inflectionUncountables = new Set([
  'accommodation', 'adulthood', 'advertising', 'advice', 'aggression', 'aid', 'air', 'aircraft', 'alcohol',
  'anger', 'applause', 'arithmetic', 'assistance', 'athletics', 'bacon', 'baggage', 'beef', 'biology',
  'blood', 'botany', 'bread', 'butter', 'carbon', 'cardboard', 'cash', 'chalk', 'chaos', 'chess',
  'crossroads', 'countryside', 'dancing', 'deer', 'dignity', 'dirt', 'dust', 'economics', 'education',
  'electricity', 'engineering', 'enjoyment', 'envy', 'equipment', 'ethics', 'evidence', 'evolution', 'fame',
  'fiction', 'flour', 'flu', 'food', 'fuel', 'fun', 'furniture', 'gallows', 'garbage', 'garlic', 'genetics',
  'gold', 'golf', 'gossip', 'gratitude', 'grief', 'guilt', 'gymnastics', 'happiness', 'hardware', 'harm',
  'hate', 'hatred', 'health', 'heat', 'help', 'homework', 'honesty', 'honey', 'hospitality', 'housework',
  'humour', 'hunger', 'hydrogen', 'ice', 'importance', 'inflation', 'information', 'innocence', 'iron',
  'irony', 'jam', 'jewelry', 'judo', 'karate', 'knowledge', 'lack', 'laughter', 'lava', 'leather', 'leisure',
  'lightning', 'linguine', 'linguini', 'linguistics', 'literature', 'litter', 'livestock', 'logic',
  'loneliness', 'luck', 'luggage', 'macaroni', 'machinery', 'magic', 'management', 'mankind', 'marble',
  'mathematics', 'mayonnaise', 'measles', 'methane', 'milk', 'minus', 'money', 'mud', 'music', 'mumps',
  'nature', 'news', 'nitrogen', 'nonsense', 'nurture', 'nutrition', 'obedience', 'obesity', 'oxygen',
  'pasta', 'patience', 'physics', 'poetry', 'pollution', 'poverty', 'pride', 'psychology', 'publicity',
  'punctuation', 'quartz', 'racism', 'relaxation', 'reliability', 'research', 'respect', 'revenge', 'rice',
  'rubbish', 'rum', 'safety', 'scenery', 'seafood', 'seaside', 'series', 'shame', 'sheep', 'shopping',
  'sleep', 'smoke', 'smoking', 'snow', 'soap', 'software', 'soil', 'spaghetti', 'species', 'steam', 'stuff',
  'stupidity', 'sunshine', 'symmetry', 'tennis', 'thirst', 'thunder', 'timber', 'traffic', 'transportation',
  'trust', 'underwear', 'unemployment', 'unity', 'validity', 'veal', 'vegetation', 'vegetarianism',
  'vengeance', 'violence', 'vitality', 'warmth', 'wealth', 'weather', 'welfare', 'wheat', 'wildlife',
  'wisdom', 'yoga', 'zinc', 'zoology',
])

const inflectionPluralRules: ReadonlyArray<readonly [RegExp, string?]> = [
  [/^(m|wom)en$/i],
  [/(pe)ople$/i],
  [/(child)ren$/i],
  [/([ti])a$/i],
  [/((a)naly|(b)a|(d)iagno|(p)arenthe|(p)rogno|(s)ynop|(t)he)ses$/i],
  [/(database)s$/i],
  [/(drive)s$/i],
  [/(hi|ti)ves$/i],
  [/(curve)s$/i],
  [/([lr])ves$/i],
  [/([^fo])ves$/i],
  [/([^aeiouy]|qu)ies$/i],
  [/(s)eries$/i],
  [/(m)ovies$/i],
  [/(x|ch|ss|sh)es$/i],
  [/([m|l])ice$/i],
  [/(bus)es$/i],
  [/(o)es$/i],
  [/(shoe)s$/i],
  [/(cris|ax|test)es$/i],
  [/(octop|vir)uses$/i],
  [/(alias|canvas|status|campus)es$/i],
  [/^(summons|bonus)es$/i],
  [/^(ox)en/i],
  [/(matr)ices$/i],
  [/^feet$/i],
  [/^teeth$/i],
  [/^geese$/i],
  [/(quiz)zes$/i],
  [/^(whereas)es$/i],
  [/^(criteri)a$/i],
  [/^genera$/i],
  [/^(m|wom)an$/i, '$1en'],
  [/(pe)rson$/i, '$1ople'],
  [/(child)$/i, '$1ren'],
  [/(drive)$/i, '$1s'],
  [/^(ox)$/i, '$1en'],
  [/(ax|test)is$/i, '$1es'],
  [/(octop|vir)us$/i, '$1uses'],
  [/(alias|status|canvas|campus)$/i, '$1es'],
  [/^(summons|bonus)$/i, '$1es'],
  [/(bu)s$/i, '$1ses'],
  [/(buffal|tomat|potat)o$/i, '$1oes'],
  [/([ti])um$/i, '$1a'],
  [/sis$/i, 'ses'],
  [/(?:([^f])fe|([lr])f)$/i, '$1$2ves'],
  [/^(focus)$/i, '$1es'],
  [/(hi|ti)ve$/i, '$1ves'],
  [/([^aeiouy]|qu)y$/i, '$1ies'],
  [/(matr)ix$/i, '$1ices'],
  [/(vert|ind)ex$/i, '$1ices'],
  [/(x|ch|ss|sh)$/i, '$1es'],
  [/([m|l])ouse$/i, '$1ice'],
  [/^foot$/i, 'feet'],
  [/^tooth$/i, 'teeth'],
  [/^goose$/i, 'geese'],
  [/(quiz)$/i, '$1zes'],
  [/^(whereas)$/i, '$1es'],
  [/^(criteri)on$/i, '$1a'],
  [/^genus$/i, 'genera'],
  [/s$/i, 's'],
  [/$/i, 's'],
]

const inflectionSingularRules: ReadonlyArray<readonly [RegExp, string?]> = [
  [/^(m|wom)an$/i],
  [/(pe)rson$/i],
  [/(child)$/i],
  [/(drive)$/i],
  [/^(ox)$/i],
  [/(ax|test)is$/i],
  [/(octop|vir)us$/i],
  [/(alias|status|canvas|campus)$/i],
  [/^(summons|bonus)$/i],
  [/(bu)s$/i],
  [/(buffal|tomat|potat)o$/i],
  [/([ti])um$/i],
  [/sis$/i],
  [/(?:([^f])fe|([lr])f)$/i],
  [/^(focus)$/i],
  [/(hi|ti)ve$/i],
  [/([^aeiouy]|qu)y$/i],
  [/(x|ch|ss|sh)$/i],
  [/(matr)ix$/i],
  [/([m|l])ouse$/i],
  [/^foot$/i],
  [/^tooth$/i],
  [/^goose$/i],
  [/(quiz)$/i],
  [/^(whereas)$/i],
  [/^(criteri)on$/i],
  [/^genus$/i],
  [/^(m|wom)en$/i, '$1an'],
  [/(pe)ople$/i, '$1rson'],
  [/(child)ren$/i, '$1'],
  [/(database)s$/i, '$1'],
  [/(drive)s$/i, '$1'],
  [/^genera$/i, 'genus'],
  [/^(criteri)a$/i, '$1on'],
  [/([ti])a$/i, '$1um'],
  [/((a)naly|(b)a|(d)iagno|(p)arenthe|(p)rogno|(s)ynop|(t)he)ses$/i, '$1$2sis'],
  [/(hi|ti)ves$/i, '$1ve'],
  [/(curve)s$/i, '$1'],
  [/([lr])ves$/i, '$1f'],
  [/([a])ves$/i, '$1ve'],
  [/([^fo])ves$/i, '$1fe'],
  [/(m)ovies$/i, '$1ovie'],
  [/([^aeiouy]|qu)ies$/i, '$1y'],
  [/(s)eries$/i, '$1eries'],
  [/(x|ch|ss|sh)es$/i, '$1'],
  [/([m|l])ice$/i, '$1ouse'],
  [/(bus)es$/i, '$1'],
  [/(o)es$/i, '$1'],
  [/(shoe)s$/i, '$1'],
  [/(cris|ax|test)es$/i, '$1is'],
  [/(octop|vir)uses$/i, '$1us'],
  [/(alias|canvas|status|campus)es$/i, '$1'],
  [/^(summons|bonus)es$/i, '$1'],
  [/^(ox)en/i, '$1'],
  [/(matr)ices$/i, '$1ix'],
  [/(vert|ind)ices$/i, '$1ex'],
  [/^feet$/i, 'foot'],
  [/^teeth$/i, 'tooth'],
  [/^geese$/i, 'goose'],
  [/(quiz)zes$/i, '$1'],
  [/^(whereas)es$/i, '$1'],
  [/ss$/i, 'ss'],
  [/s$/i, ''],
]

function applyInflection(word: string, rules: ReadonlyArray<readonly [RegExp, string?]>): string {
  if (inflectionUncountables.has(word.toLocaleLowerCase())) return word
  for (const [pattern, replacement] of rules) {
    if (pattern.test(word)) return replacement === undefined ? word : word.replace(pattern, replacement)
  }
  return word
}

/** `inflection.singularize`: `people` → `person`, `heroes` → `hero`. */
export function singularOfInflection(word: string): string {
  return applyInflection(word, inflectionSingularRules)
}

/** `inflection.pluralize`: `person` → `people`, `hero` → `heros`. */
export function pluralOfInflection(word: string): string {
  return applyInflection(word, inflectionPluralRules)
}
