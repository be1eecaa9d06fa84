import { HttpError } from '../http-error.ts'
import type { Pace } from '../data/pace.ts'

/*
 * `_like` as json-server 0.17 reads it (`new RegExp(value, 'i').test(field)`,
 * docs/json-server.md, "Queries"): a JavaScript regular expression, ignoring
 * case. A backtracking engine, V8's included, takes time exponential in the
 * text for some patterns (`(a+)+$`) and quadratic for the plainest (`.*x` on
 * 100 000 characters takes V8 some 25 seconds), and a query string is anyone's
 * to write; so a pattern is checked by V8 for its syntax, then run here by a
 * Thompson automaton (a Pike VM without captures, which `test` does not need):
 * every character of the text is looked at once for each state of the pattern,
 * at most, so the work is the text's length times the pattern's size, spent on
 * the listing's work budget (lib/data/pace.ts) a piece at a time.
 * Backreferences and lookarounds need backtracking: such a pattern is a 400
 * that names it.
 */

/** Most states a pattern may come to once its counted repetitions (`a{2,50}`) are written out. */
export const MAX_PATTERN_STATES = 1000

/** A text is matched this many characters at a time between two looks at the work budget. */
const PIECE = 1024

type CharTest = (code: number) => boolean

type Instruction =
  | { kind: 'char'; test: CharTest }
  | { kind: 'split'; first: number; second: number }
  | { kind: 'jump'; to: number }
  | { kind: 'assert'; at: 'start' | 'end' | 'boundary' | 'inside' }
  | { kind: 'match' }

type Node =
  | { kind: 'char'; test: CharTest }
  | { kind: 'assert'; at: 'start' | 'end' | 'boundary' | 'inside' }
  | { kind: 'sequence'; items: Node[] }
  | { kind: 'either'; options: Node[] }
  | { kind: 'repeat'; item: Node; min: number; max: number }

/** A compiled `_like` pattern: `test` answers what `new RegExp(source, 'i').test(text)` answers. */
export class LikePattern {
  readonly source: string
  readonly #program: Instruction[]
  /**
   * Plain text, perhaps anchored (`^Hello`, `world$`), which V8 matches without backtracking
   * (each start tried once, at most the pattern's length): V8's own matcher, many times faster,
   * for a text short enough to be one step.
   */
  readonly #plain: RegExp | undefined

  private constructor(source: string, program: Instruction[]) {
    this.source = source
    this.#program = program
    this.#plain = /^\^?[^\\^$.|?*+()[\]{}]*\$?$/.test(source) ? new RegExp(source, 'i') : undefined
  }

  /** Compiles `source`; a 400 naming it when it is no regular expression, or one that needs backtracking. */
  static compile(source: string, parameter: string): LikePattern {
    try {
      new RegExp(source, 'i')
    } catch (error) {
      throw new HttpError(400, `${parameter}=${source} is not a regular expression: ${(error as Error).message}.`)
    }
    const node = new Parser(source, parameter).parse()
    const program: Instruction[] = []
    emit(node, program, source, parameter)
    program.push({ kind: 'match' })
    return new LikePattern(source, program)
  }

  /** How much one character of text costs to match, at most: the pattern's size. */
  get size(): number {
    return this.#program.length
  }

  test(text: string): boolean {
    if (this.#plain && text.length <= PIECE) return this.#plain.test(text)
    const run = this.#begin()
    return this.#advance(run, text, text.length)
  }

  /** As `test`, a piece of the text at a time, spending the work on `pace`. */
  async testPaced(text: string, pace: Pace): Promise<boolean> {
    const run = this.#begin()
    for (;;) {
      if (this.#advance(run, text, Math.min(run.position + PIECE, text.length))) return true
      if (run.position >= text.length) return false
      const turn = pace(PIECE * this.#program.length)
      if (turn) await turn
    }
  }

  /** A run of its own, so that listings matching the same pattern at once never share state. */
  #begin(): Run {
    const run: Run = { position: 0, threads: { states: [], generation: 1, matched: false }, marks: new Uint32Array(this.#program.length) }
    return run
  }

  /** Runs the automaton from `run.position` to `until`; true once the pattern matched somewhere. */
  #advance(run: Run, text: string, until: number): boolean {
    for (;;) {
      const position = run.position
      // A search: a match may start at any position.
      this.#add(run, run.threads, 0, text, position)
      if (run.threads.matched) return true
      if (position >= until) return false
      const code = text.charCodeAt(position)
      // Each step's threads have a generation of their own: a state is marked as in them by it.
      const next: Threads = { states: [], generation: run.threads.generation + 1, matched: false }
      for (const state of run.threads.states) {
        const instruction = this.#program[state]
        if (instruction.kind === 'char' && instruction.test(code)) this.#add(run, next, state + 1, text, position + 1)
      }
      run.threads = next
      run.position = position + 1
    }
  }

  /** Adds a state and every state it reaches without reading a character. */
  #add(run: Run, threads: Threads, first: number, text: string, position: number): void {
    const stack = [first]
    while (stack.length > 0) {
      const state = stack.pop()!
      if (run.marks[state] === threads.generation) continue
      run.marks[state] = threads.generation
      const instruction = this.#program[state]
      switch (instruction.kind) {
        case 'char':
          threads.states.push(state)
          break
        case 'match':
          threads.matched = true
          break
        case 'jump':
          stack.push(instruction.to)
          break
        case 'split':
          stack.push(instruction.second, instruction.first)
          break
        case 'assert':
          if (holds(instruction.at, text, position)) stack.push(state + 1)
          break
      }
    }
  }
}

interface Threads {
  states: number[]
  generation: number
  matched: boolean
}

interface Run {
  position: number
  threads: Threads
  /** For each state, the generation of the threads it was last added to. */
  marks: Uint32Array
}

function holds(at: 'start' | 'end' | 'boundary' | 'inside', text: string, position: number): boolean {
  if (at === 'start') return position === 0
  if (at === 'end') return position === text.length
  const before = position > 0 && isWordCode(text.charCodeAt(position - 1))
  const after = position < text.length && isWordCode(text.charCodeAt(position))
  return (before !== after) === (at === 'boundary')
}

/** Writes the instructions of `node` at the end of `program`. */
function emit(node: Node, program: Instruction[], source: string, parameter: string): void {
  if (program.length > MAX_PATTERN_STATES) {
    throw new HttpError(400, `${parameter}=${source} is too large once its repetitions are written out (more than ${MAX_PATTERN_STATES} states); repeat less.`)
  }
  switch (node.kind) {
    case 'char':
    case 'assert':
      program.push(node)
      return
    case 'sequence':
      for (const item of node.items) emit(item, program, source, parameter)
      return
    case 'either': {
      const jumps: Array<{ kind: 'jump'; to: number }> = []
      node.options.forEach((option, index) => {
        const last = index === node.options.length - 1
        const split = { kind: 'split' as const, first: program.length + 1, second: 0 }
        if (!last) program.push(split)
        emit(option, program, source, parameter)
        if (!last) {
          const jump = { kind: 'jump' as const, to: 0 }
          program.push(jump)
          jumps.push(jump)
          split.second = program.length
        }
      })
      for (const jump of jumps) jump.to = program.length
      return
    }
    case 'repeat': {
      for (let count = 0; count < node.min; count++) emit(node.item, program, source, parameter)
      if (node.max === Infinity) {
        const split = { kind: 'split' as const, first: program.length + 1, second: 0 }
        const loop = program.length
        program.push(split)
        emit(node.item, program, source, parameter)
        program.push({ kind: 'jump', to: loop })
        split.second = program.length
        return
      }
      const splits: Array<{ kind: 'split'; first: number; second: number }> = []
      for (let count = node.min; count < node.max; count++) {
        const split = { kind: 'split' as const, first: program.length + 1, second: 0 }
        program.push(split)
        splits.push(split)
        emit(node.item, program, source, parameter)
      }
      for (const split of splits) split.second = program.length
      return
    }
  }
}

/**
 * Reads a pattern V8 has already accepted (without the `u` flag, as 0.17
 * builds it), so only valid syntax is met here, Annex B's leniencies
 * (a lone `]` or `{`, `\a` for `a`) included.
 */
class Parser {
  #at = 0
  constructor(readonly source: string, readonly parameter: string) {}

  parse(): Node {
    return this.#either()
  }

  #either(): Node {
    const options = [this.#sequence()]
    while (this.source[this.#at] === '|') {
      this.#at++
      options.push(this.#sequence())
    }
    return options.length === 1 ? options[0] : { kind: 'either', options }
  }

  #sequence(): Node {
    const items: Node[] = []
    while (this.#at < this.source.length && this.source[this.#at] !== '|' && this.source[this.#at] !== ')') {
      const atom = this.#atom()
      items.push(this.#quantified(atom))
    }
    return { kind: 'sequence', items }
  }

  #quantified(atom: Node): Node {
    const { source } = this
    const sign = source[this.#at]
    let min: number
    let max: number
    if (sign === '*' || sign === '+' || sign === '?') {
      this.#at++
      ;[min, max] = sign === '*' ? [0, Infinity] : sign === '+' ? [1, Infinity] : [0, 1]
    } else {
      const counted = /^\{(\d+)(,(\d*))?\}/.exec(source.slice(this.#at))
      if (!counted) return atom
      this.#at += counted[0].length
      min = Number(counted[1])
      max = counted[2] === undefined ? min : counted[3] === '' ? Infinity : Number(counted[3])
      if (min > MAX_PATTERN_STATES || (max !== Infinity && max > MAX_PATTERN_STATES)) {
        throw new HttpError(400, `${this.parameter}=${source} repeats more than ${MAX_PATTERN_STATES} times; repeat less.`)
      }
    }
    // A lazy quantifier matches where the greedy one does: `test` asks only whether there is a match.
    if (source[this.#at] === '?') this.#at++
    if (atom.kind === 'assert') return atom
    return { kind: 'repeat', item: atom, min, max }
  }

  #atom(): Node {
    const { source } = this
    const char = source[this.#at++]
    switch (char) {
      case '^':
        return { kind: 'assert', at: 'start' }
      case '$':
        return { kind: 'assert', at: 'end' }
      case '.':
        return { kind: 'char', test: (code) => code !== 0x0a && code !== 0x0d && code !== 0x2028 && code !== 0x2029 }
      case '[':
        return this.#class()
      case '(': {
        if (source.startsWith('?:', this.#at)) this.#at += 2
        else if (/^\?<?[=!]/.test(source.slice(this.#at))) throw this.#needsBacktracking('a lookaround ((?=, (?!, (?<=, (?<!)')
        else if (source.startsWith('?<', this.#at)) this.#at = source.indexOf('>', this.#at) + 1
        const inner = this.#either()
        this.#at++ // the `)`
        return inner
      }
      case '\\':
        return this.#escape()
      default:
        return literal(char.charCodeAt(0))
    }
  }

  #escape(): Node {
    const { source } = this
    const char = source[this.#at++]
    if (char === 'b') return { kind: 'assert', at: 'boundary' }
    if (char === 'B') return { kind: 'assert', at: 'inside' }
    if (/[1-9]/.test(char) || (char === 'k' && source[this.#at] === '<' && /\(\?<[^=!]/.test(source))) {
      throw this.#needsBacktracking(`a backreference (\\${char})`)
    }
    const set = classEscape(char)
    if (set) return { kind: 'char', test: set }
    this.#at--
    return literal(this.#escapedCode())
  }

  /** The character an escape (after its `\`) stands for, moving past it. */
  #escapedCode(): number {
    const { source } = this
    const char = source[this.#at++]
    const simple: Record<string, number> = { n: 0x0a, r: 0x0d, t: 0x09, v: 0x0b, f: 0x0c }
    if (char in simple) return simple[char]
    if (char === 'c' && /[a-z]/i.test(source[this.#at] ?? '')) return source.charCodeAt(this.#at++) % 32
    const hex = char === 'x' ? /^[\da-f]{2}/i.exec(source.slice(this.#at)) : char === 'u' ? /^[\da-f]{4}/i.exec(source.slice(this.#at)) : null
    if (hex) {
      this.#at += hex[0].length
      return parseInt(hex[0], 16)
    }
    if (char === '0' && !/\d/.test(source[this.#at] ?? '')) return 0
    if (/[0-7]/.test(char)) {
      // Annex B's octal escape (`\07`, or `\0` followed by a digit).
      const octal = /^[0-7]{0,2}/.exec(source.slice(this.#at))![0]
      this.#at += octal.length
      return parseInt(char + octal, 8) & 0xff
    }
    return char.charCodeAt(0)
  }

  #class(): Node {
    const { source } = this
    const negated = source[this.#at] === '^'
    if (negated) this.#at++
    const members: CharTest[] = []
    while (source[this.#at] !== ']') {
      const low = this.#classAtom()
      if (source[this.#at] === '-' && source[this.#at + 1] !== ']' && typeof low === 'number') {
        this.#at++
        const high = this.#classAtom()
        if (typeof high === 'number') {
          members.push((code) => code >= low && code <= high)
          continue
        }
        members.push((code) => code === low || code === 0x2d, high)
        continue
      }
      members.push(typeof low === 'number' ? (code) => code === low : low)
    }
    this.#at++ // the `]`
    const inSet = (code: number) => members.some((member) => member(code))
    // With `i`, a character is in the set when a character of the set is the same once case is folded (ECMA-262 CharacterSetMatcher).
    const folded = (code: number) => variantsOf(code).some((variant) => inSet(variant) && fold(variant) === fold(code))
    return { kind: 'char', test: negated ? (code) => !folded(code) : folded }
  }

  /** One member of a class: a character's code, or a set (`\d`). */
  #classAtom(): number | CharTest {
    const { source } = this
    const char = source[this.#at++]
    if (char !== '\\') return char.charCodeAt(0)
    const escaped = source[this.#at]
    if (escaped === 'b') {
      this.#at++
      return 0x08
    }
    if (escaped === '-') {
      this.#at++
      return 0x2d
    }
    const set = classEscape(escaped)
    if (set) {
      this.#at++
      return set
    }
    return this.#escapedCode()
  }

  #needsBacktracking(what: string): HttpError {
    return new HttpError(400, `${this.parameter}=${this.source} holds ${what}, which only a backtracking search can match, and such a search can hold the server for hours; _like takes every other regular expression.`)
  }
}

function classEscape(char: string): CharTest | undefined {
  switch (char) {
    case 'd':
      return isDigit
    case 'D':
      return (code) => !isDigit(code)
    case 'w':
      return isWordCode
    case 'W':
      return (code) => !isWordCode(code)
    case 's':
      return isSpace
    case 'S':
      return (code) => !isSpace(code)
  }
  return undefined
}

function literal(wanted: number): Node {
  const folded = fold(wanted)
  return { kind: 'char', test: (code) => code === wanted || fold(code) === folded }
}

function isDigit(code: number): boolean {
  return code >= 0x30 && code <= 0x39
}

function isWordCode(code: number): boolean {
  return isDigit(code) || (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a) || code === 0x5f
}

const SPACES = new Set([0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x20, 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff])

function isSpace(code: number): boolean {
  return SPACES.has(code) || (code >= 0x2000 && code <= 0x200a)
}

const foldCache = new Map<number, number>()

/** ECMA-262's Canonicalize without `u`: the upper case when it is one code unit, and not ASCII for a non-ASCII character. */
function fold(code: number): number {
  if (code < 0x61) return code
  if (code <= 0x7a) return code - 0x20
  if (code < 0x80) return code
  let folded = foldCache.get(code)
  if (folded === undefined) {
    const upper = String.fromCharCode(code).toUpperCase()
    folded = upper.length !== 1 || upper.charCodeAt(0) < 0x80 ? code : upper.charCodeAt(0)
    foldCache.set(code, folded)
  }
  return folded
}

/** The characters that may be `code` once case is folded: itself, its lower and its upper case. */
function variantsOf(code: number): number[] {
  const char = String.fromCharCode(code)
  const variants = [code]
  for (const other of [char.toLowerCase(), char.toUpperCase()]) if (other.length === 1) variants.push(other.charCodeAt(0))
  return variants
}

/** Texts up to this long are matched in one step; longer ones a piece at a time (testPaced). */
export const LIKE_IN_ONE_STEP = PIECE

/** Patterns compiled lately, by their source: a listing compiles its patterns once, not once per document. */
const compiled = new Map<string, LikePattern>()
const MAX_COMPILED = 256

/** The compiled pattern of `source` (LikePattern.compile; the 400 it throws names `parameter`). */
export function likePattern(source: string, parameter = '_like'): LikePattern {
  let pattern = compiled.get(source)
  if (!pattern) {
    pattern = LikePattern.compile(source, parameter)
    if (compiled.size >= MAX_COMPILED) compiled.clear()
    compiled.set(source, pattern)
  }
  return pattern
}
