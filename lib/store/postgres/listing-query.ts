import type { ListingCondition, ListingPage, ListingPlan } from '../store.ts'

/**
 * Listing queries answered inside PostgreSQL (docs/postgres.md, "Running on PostgreSQL"): filters, `_sort` and the window are SQL, so a page of a big
 * collection brings only its own documents into the process. The answer must
 * be the very one the listing module (lib/listing) gives in the process, so
 * the SQL here follows its rules one by one: values compared as JavaScript's
 * `String()` writes them, case folded as `toLowerCase()` folds it, strings in
 * UTF-16 code-unit order, numbers as doubles. What the SQL cannot judge
 * exactly is never guessed: a plan it cannot express, or rows it cannot be
 * sure of, make `listingSql` or the query answer "not here", and the
 * listing runs in the process as on the other stores.
 */

/** The column, functions and indexes the queries need; made once, under a lock, by `ensureQuerySchema`. */
const QUERY_SCHEMA = [
  // A string or number that JavaScript's Number() reads, in the forms whose value SQL reads exactly (a double keeps
  // 15 significant digits); anything else is null. Bounded in length so that it never leaves a double's range.
  `CREATE FUNCTION restdir_decimal(value text) RETURNS numeric LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
     SELECT CASE WHEN value ~ '^-?[0-9]+(\\.[0-9]+)?$' AND length(value) <= 300
       AND length(ltrim(translate(CASE WHEN strpos(value, '.') > 0 THEN rtrim(value, '0') ELSE value END, '-.', ''), '0')) <= 15
       THEN value::numeric END
   $$`,
  // The document as jsonb, or null for text that JSON.parse and jsonb may read differently: not an object, a key
  // repeated, a -0, a number whose String() SQL cannot write (past 15 digits, below 1e-6), an escape jsonb refuses.
  // The functions that call others of these find them in their own schema, whatever the caller's search_path (a dump's restore).
  `CREATE FUNCTION restdir_jsonb(text text) RETURNS jsonb LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE SET search_path FROM CURRENT AS $$
   DECLARE
     doc jsonb;
   BEGIN
     IF text ~ '[,:[]\\s*-0+(\\.0*)?([eE][-+]?[0-9]+)?\\s*[]},]' THEN RETURN NULL; END IF;
     BEGIN
       doc := text::jsonb;
     EXCEPTION WHEN others THEN
       RETURN NULL;
     END;
     IF jsonb_typeof(doc) <> 'object' THEN RETURN NULL; END IF;
     IF regexp_count(text, '"\\s*:') <> (SELECT count(*) FROM jsonb_path_query(doc, 'strict $.** ? (@.type() == "object").keyvalue()')) THEN RETURN NULL; END IF;
     IF EXISTS (SELECT 1 FROM jsonb_path_query(doc, 'strict $.** ? (@.type() == "number")') AS number
                WHERE restdir_decimal(trim_scale(number::numeric)::text) IS NULL
                   OR (number::numeric <> 0 AND abs(number::numeric) < 0.000001)) THEN RETURN NULL; END IF;
     RETURN doc;
   END
   $$`,
  // JavaScript's String() of a present value (null and missing give null): a number as the shortest text, which for
  // the numbers restdir_jsonb keeps is the trimmed decimal; an array joined with commas, null items as ''.
  `CREATE FUNCTION restdir_array_string(value jsonb) RETURNS text LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
   BEGIN
     RETURN (SELECT coalesce(string_agg(coalesce(restdir_string(item), ''), ',' ORDER BY position), '')
             FROM jsonb_array_elements(value) WITH ORDINALITY AS items(item, position));
   END
   $$`,
  `CREATE FUNCTION restdir_string(value jsonb) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
     SELECT CASE jsonb_typeof(value)
       WHEN 'string' THEN value #>> '{}' WHEN 'boolean' THEN value #>> '{}'
       WHEN 'number' THEN trim_scale(value::numeric)::text
       WHEN 'object' THEN '[object Object]'
       WHEN 'array' THEN restdir_array_string(value)
     END
   $$`,
  // toLowerCase() for text compared with ASCII: the "C" collation folds ASCII alone, and the only other characters
  // whose lower case holds ASCII are U+0130 (to i and U+0307) and the Kelvin sign (to k).
  `CREATE FUNCTION restdir_lower(value text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
     SELECT lower(replace(replace(value, U&'\\0130', U&'i\\0307'), U&'\\212A', 'k') COLLATE "C")
   $$`,
  // A text whose code-point order is the UTF-16 code-unit order of the original: as nameOf in keys.ts does for
  // names, every unit from U+D800 up moves 0x800 up, a character beyond U+FFFF becoming its two shifted surrogates.
  `CREATE FUNCTION restdir_units(value text) RETURNS text LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
   DECLARE
     result text := '';
     point int;
   BEGIN
     IF value !~ U&'[\\E000-\\+10FFFF]' THEN RETURN value; END IF;
     FOREACH point IN ARRAY (SELECT array_agg(ascii(character)) FROM regexp_split_to_table(value, '') AS character) LOOP
       IF point >= 65536 THEN
         result := result || chr(55296 + ((point - 65536) >> 10) + 2048) || chr(56320 + ((point - 65536) & 1023) + 2048);
       ELSIF point >= 57344 THEN
         result := result || chr(point + 2048);
       ELSE
         result := result || chr(point);
       END IF;
     END LOOP;
     RETURN result;
   END
   $$`,
  // The dotted paths (through objects alone) at which a document holds an array: String() of an array can equal
  // any text, so an equality filter must also look at these rows (see prefilter).
  `CREATE FUNCTION restdir_array_fields(doc jsonb) RETURNS text[] LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
     WITH RECURSIVE member(path, value) AS (
       SELECT key, value FROM jsonb_each(doc) WHERE strpos(key, '.') = 0
       UNION ALL
       SELECT member.path || '.' || inner_member.key, inner_member.value
       FROM member, jsonb_each(CASE WHEN jsonb_typeof(member.value) = 'object' THEN member.value ELSE '{}' END) AS inner_member
       WHERE strpos(inner_member.key, '.') = 0
     )
     SELECT coalesce(array_agg(path), '{}') FROM member WHERE jsonb_typeof(value) = 'array'
   $$`,
  `ALTER TABLE restdir_nodes ADD COLUMN doc jsonb GENERATED ALWAYS AS (restdir_jsonb(text)) STORED`,
  // Equality filters find their candidates here, in any collection, before the parent narrows them.
  `CREATE INDEX restdir_documents_json ON restdir_nodes USING gin (doc jsonb_path_ops)`,
  `CREATE INDEX restdir_documents_arrays ON restdir_nodes USING gin (restdir_array_fields(doc)) WHERE doc IS NOT NULL`,
  // Documents SQL does not read (see restdir_jsonb): a collection holding one is listed in the process.
  `CREATE INDEX restdir_documents_unread ON restdir_nodes (parent) WHERE text IS NOT NULL AND doc IS NULL`,
]

interface Queryable {
  query(text: string, values?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>
}
interface Connecting {
  connect(): Promise<Queryable & { release(): void }>
}

/**
 * Adds what listing queries need to the restdir schema, once: idempotent, and
 * under an advisory lock, so that servers starting together add it once. A
 * table that holds documents already is rewritten once, to fill the column.
 */
export function ensureQuerySchema(pool: Connecting): Promise<void> {
  return addToSchemaOnce(
    pool,
    `SELECT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass('restdir_nodes') AND attname = 'doc' AND NOT attisdropped) AS present`,
    QUERY_SCHEMA,
  )
}

/**
 * Runs `statements` in one transaction under the schema's advisory lock,
 * unless `presentSql` (a row with a boolean `present`) finds them run
 * already: instances starting together add them once.
 */
export async function addToSchemaOnce(pool: Connecting, presentSql: string, statements: readonly string[]): Promise<void> {
  const client = await pool.connect()
  try {
    await client.query('BEGIN')
    await client.query("SELECT pg_advisory_xact_lock(hashtext('restdir schema'))")
    const { rows } = await client.query(presentSql)
    if (rows[0].present !== true) for (const statement of statements) await client.query(statement)
    await client.query('COMMIT')
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {})
    throw error
  } finally {
    client.release()
  }
}

/** A plan as SQL: the statement and its values; named when its text is one of a few, so that each connection plans it once. */
export interface ListingSql {
  name?: string
  text: string
  values: unknown[]
}

/**
 * The statement answering a listing plan on the collection whose key is
 * `parentKey`, or undefined for a plan it cannot answer exactly. It answers
 * one row: `total` (the documents matching), `unsure` (some row SQL cannot
 * judge exactly), `unread` (the collection holds a document SQL does not
 * read), and `page`, the texts of the window as a JSON array (which the client
 * reads with JSON.parse, far faster than an array literal). `order` is the id order of
 * children (ID_ORDER in schema.ts), the last key of every sort, as the listing's sort is stable.
 */
export function listingSql(parentKey: string, plan: ListingPlan, order: string): ListingSql | undefined {
  const values: unknown[] = [parentKey]
  const parameter = (value: unknown, type: string) => {
    values.push(value)
    return `$${values.length}::${type}`
  }
  const builder = new Builder(parameter)
  const match = builder.conditions(plan.filters)
  const sort = builder.sort(plan.sort)
  if (match === undefined || sort === undefined || builder.failed) return undefined
  const prefilter = builder.prefilter(plan.filters)
  const any = (conditions: string[]) => (conditions.length > 0 ? conditions.join(' OR ') : 'false')
  const limit = plan.end === undefined ? null : Math.max(0, plan.end - plan.start)
  const keys = sort.map(({ direction }, index) => `key${index} ${direction}`)
  // Each candidate's columns, none null and those of fixed width first: a sort then reads its keys at fixed places in the row.
  const keyColumns = (fixed: boolean) => sort.flatMap((key, index) => (key.fixed === fixed ? [`${key.sql} AS key${index}`] : []))
  const listed = [
    ...keyColumns(true),
    `coalesce(${match}, false) AS match`,
    `coalesce(${any(builder.unsureFilter)}, false) AS unsure_filter`,
    `coalesce(${any(builder.unsureSort)}, false) AS unsure_sort`,
    'row',
    ...keyColumns(false),
    'name',
  ]
  const offset = parameter(plan.start, 'bigint')
  const count = parameter(limit, 'bigint')
  // Each candidate's fields are taken out once (the subquery that OFFSET 0 keeps whole), then its match, doubts and
  // sort keys worked out once; one pass counts. The id order, the dearest key, is worked out only for the rows that
  // reach the window by the sort keys (ties with the last of them included); the page's texts are fetched by row for its rows alone.
  const ranked = keys.length === 0 || limit === null
    ? `candidates WHERE match`
    : `(SELECT * FROM candidates WHERE match ORDER BY ${keys.join(', ')} FETCH FIRST (${offset} + ${count}) ROWS WITH TIES) AS candidates`
  const text = `WITH candidates AS MATERIALIZED (
      SELECT ${listed.join(', ')}
      FROM (SELECT restdir_nodes.ctid AS row, name, doc ${builder.fields()} FROM restdir_nodes
            WHERE parent = $1 AND doc IS NOT NULL AND ${prefilter} OFFSET 0) AS fields
    ), summary AS (
      SELECT count(*) FILTER (WHERE match) AS total, coalesce(bool_or(unsure_filter OR (match AND unsure_sort)), false) AS unsure FROM candidates
    )
    SELECT summary.total::bigint AS total, summary.unsure,
      EXISTS (SELECT 1 FROM restdir_nodes WHERE parent = $1 AND text IS NOT NULL AND doc IS NULL) AS unread,
      array_to_json(ARRAY(SELECT (SELECT text FROM restdir_nodes WHERE ctid = candidates.row) FROM ${ranked}
            ORDER BY ${[...keys, order].join(', ')} OFFSET ${offset} LIMIT ${count})) AS page
    FROM summary`
  return { text, values }
}

/**
 * Answers a listing plan with its statement (listingSql, or indexedListingSql
 * in listing-index-sql.ts); undefined when there is none, when the rows
 * or the collection's documents leave the listing to the process, or when
 * the collection does not exist (the process answers that too).
 */
export async function queryListing(
  sql: ListingSql | undefined,
  run: (sql: ListingSql) => Promise<{ rows: Record<string, unknown>[] }>,
  exists: () => Promise<boolean>,
): Promise<ListingPage | undefined> {
  if (!sql) return undefined
  const { rows } = await run(sql)
  const { total, unsure, unread, page } = rows[0] as { total: string; unsure: boolean; unread: boolean; page: string[] }
  if (unsure || unread) return undefined
  if (Number(total) === 0 && !(await exists())) return undefined
  return { texts: page, total: Number(total) }
}

/** A JavaScript string holding only ASCII: the case folding SQL does exactly (see restdir_lower). */
const ascii = /^[\x00-\x7f]*$/
/** No UTF-16 unit from U+D800 up: compared with any text, code-point order and code-unit order agree. */
const belowSurrogates = /^[^\ud800-\uffff]*$/
/** The strings the listing sorts as numbers (lib/listing/sort.ts). */
const NUMERIC_STRING = `'^-?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?$'`
/** Strings JavaScript's Number() may read as a number (a superset: whitespace, signs, Infinity, 0x…). */
const SPACES = `\\s\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff`
const MAYBE_NUMBER = `'^[${SPACES}]*[-+]?(Infinity|\\.?[0-9])'`
/** Strings of white space alone, which Number() reads as 0. */
const BLANK = `'^[${SPACES}]*$'`

type Operand = NonNullable<ListingCondition['operands']>[number]

/** An operand that is a JSON scalar, not an array's or object's stand-in. */
function isScalar(operand: Operand): operand is string | number | boolean | null {
  return operand === null || typeof operand !== 'object'
}

/** String() of an operand (lib/listing/typed.ts, textOf). */
function operandText(operand: Operand): string {
  return isScalar(operand) ? String(operand) : operand.text
}

/** A sort key's SQL, its direction, and whether its value has a fixed width. */
export interface SqlSortKey {
  sql: string
  direction: 'ASC' | 'DESC'
  fixed: boolean
}

/**
 * The three sort keys of a field's `value` (SQL), as the listing's own: the rank (missing last, the others turned
 * round for a descending order, so it always sorts ascending), the value as a double, the text; never null, so
 * that a sort reads them at fixed places in its rows. A double orders the numbers restdir_decimal and
 * restdir_jsonb let through as the listing's Number() does: at most 15 significant digits, so two different
 * values never meet in one double. `longText` bounds the text key (see listing-index-sql.ts): a longer string
 * is left out of it, and its row must be counted unsure.
 */
export function sortKeys(value: string, descending: boolean, longText?: number): SqlSortKey[] {
  const text = `${value} #>> '{}'`
  const direction = descending ? 'DESC' : 'ASC'
  const rank = (of: number) => (descending ? 3 - of : of)
  const bounded = longText === undefined ? '' : ` AND octet_length(${text}) <= ${longText}`
  return [
    {
      sql: `(CASE WHEN ${value} IS NULL THEN 4 ELSE CASE jsonb_typeof(${value}) WHEN 'number' THEN ${rank(0)} WHEN 'boolean' THEN ${rank(1)} WHEN 'string' THEN CASE WHEN ${text} ~ ${NUMERIC_STRING} THEN ${rank(0)} ELSE ${rank(2)} END ELSE ${rank(3)} END END)::int2`,
      direction: 'ASC',
      fixed: true,
    },
    {
      sql: `coalesce(CASE jsonb_typeof(${value}) WHEN 'number' THEN (${value})::float8 WHEN 'boolean' THEN CASE WHEN ${text} = 'true' THEN 1 ELSE 0 END WHEN 'string' THEN restdir_decimal(${text})::float8 END, 0)`,
      direction,
      fixed: true,
    },
    { sql: `coalesce(CASE WHEN jsonb_typeof(${value}) = 'string'${bounded} AND NOT ${text} ~ ${NUMERIC_STRING} THEN restdir_units(${text}) END, '') COLLATE "C"`, direction, fixed: false },
  ]
}

/** The rows whose `value` the SQL sort cannot order as the listing does: arrays and objects (by their JSON text), numeric strings SQL does not read exactly. */
export function unsureSort(value: string): string {
  const text = `${value} #>> '{}'`
  return `(jsonb_typeof(${value}) IN ('array', 'object') OR (jsonb_typeof(${value}) = 'string' AND ${text} ~ ${NUMERIC_STRING} AND restdir_decimal(${text}) IS NULL))`
}

/** A dotted field path SQL reads as the listing does: through objects alone. An array's items and its `length` are own properties in JavaScript; jsonb reads indexes (even ` 1`, `-1`) its own way. */
export function plainField(field: string): boolean {
  return !field.split('.').some((segment) => /^\s*[-+]?\d/.test(segment) || segment === 'length')
}

/** The SQL of conditions and sort keys, with the rows each leaves unsure. */
class Builder {
  failed = false
  /** Row conditions under which a filter's SQL may differ from the listing's answer. */
  readonly unsureFilter: string[] = []
  /** The same for the sort, among matching rows. */
  readonly unsureSort: string[] = []
  readonly #paths = new Map<string, string>()
  readonly #extractions: string[] = []

  constructor(readonly parameter: (value: unknown, type: string) => string) {}

  /**
   * The value at a dotted field, JSON null as missing (`keepNull`: JSON null kept, as a typed
   * filter tells it from missing); undefined (the plan fails) for a path SQL may read otherwise.
   */
  value(field: string | undefined, keepNull = false): string {
    if (field === undefined) return this.fail()
    const key = `${keepNull ? 'json' : 'value'} ${field}`
    const known = this.#paths.get(key)
    if (known) return known
    if (!plainField(field)) return this.fail()
    const segments = field.split('.')
    const value = `fields.value${this.#paths.size}`
    this.#paths.set(key, value)
    // A chain of -> (one key each) costs far less per row than #> with a path array, and reads objects alike.
    const chain = segments.map((segment) => ` -> ${this.parameter(segment, 'text')}`).join('')
    this.#extractions.push(`${keepNull ? `doc${chain}` : `nullif(doc${chain}, 'null'::jsonb)`} AS value${this.#paths.size - 1}`)
    return value
  }

  /** The fields' values as columns of each candidate, beside its row, name and document. */
  fields(): string {
    return this.#extractions.map((extraction) => `, ${extraction}`).join('')
  }

  fail(): string {
    this.failed = true
    return 'false'
  }

  conditions(filters: readonly ListingCondition[]): string | undefined {
    if (filters.length === 0) return 'true'
    const parts = filters.map((filter) => this.condition(filter))
    return this.failed ? undefined : `(${parts.join(' AND ')})`
  }

  condition(filter: ListingCondition): string {
    const values = filter.values ?? []
    if (filter.operator === 'or') {
      const branches = (filter.branches ?? []).map((branch) => this.conditions(branch) ?? this.fail())
      return branches.length === 0 ? 'false' : `(${branches.join(' OR ')})`
    }
    if (filter.operator === 'q') {
      if (!values.every((text) => ascii.test(text))) return this.fail()
      const scalars = `jsonb_path_query(doc, 'strict $.** ? (@.type() == "string" || @.type() == "number" || @.type() == "boolean")')`
      return values.map((text) => `EXISTS (SELECT 1 FROM ${scalars} AS scalar WHERE strpos(restdir_lower(restdir_string(scalar)), ${this.parameter(text, 'text')}) > 0)`).join(' AND ') || 'true'
    }
    if (filter.operator === 'typed') return this.typed(filter)
    const value = this.value(filter.field)
    const string = `restdir_string(${value})`
    switch (filter.operator) {
      case 'eq':
      case 'in':
        return `coalesce(${string} COLLATE "C" = ANY (${this.parameter(values, 'text[]')}), false)`
      case 'ne':
        return `(${value} IS NULL OR NOT (${string} COLLATE "C" = ANY (${this.parameter(values, 'text[]')})))`
      case 'like':
        // A regular expression as JavaScript reads it (lib/listing/like.ts): left to the process.
        return this.fail()
      case 'contains':
      case 'startsWith':
      case 'endsWith': {
        const lowered = values.map((wanted) => wanted.toLowerCase())
        if (!lowered.every((wanted) => ascii.test(wanted))) return this.fail()
        const folded = `restdir_lower(${string})`
        const tests = lowered.map((wanted) => {
          const needle = this.parameter(wanted, 'text')
          if (filter.operator === 'startsWith') return `starts_with(${folded}, ${needle})`
          if (filter.operator === 'endsWith') return `right(${folded}, length(${needle})) = ${needle}`
          return `strpos(${folded}, ${needle}) > 0`
        })
        return `(${value} IS NOT NULL AND (${tests.join(' OR ') || 'false'}))`
      }
      case 'gt':
      case 'gte':
      case 'lt':
      case 'lte':
        return this.range(value, filter.operator, values)
      default:
        return this.fail()
    }
  }

  /** compareLoosely (lib/listing/filters.ts): numbers and numeric strings by value, anything else as text. */
  range(value: string, operator: 'gt' | 'gte' | 'lt' | 'lte', bounds: readonly string[]): string {
    const sign = { gt: '>', gte: '>=', lt: '<', lte: '<=' }[operator]
    const text = `${value} #>> '{}'`
    const number = `(CASE jsonb_typeof(${value}) WHEN 'number' THEN (${value})::numeric WHEN 'string' THEN restdir_decimal(${text}) END)`
    const tests = bounds.map((bound) => {
      if (!belowSurrogates.test(bound)) return this.fail()
      const asText = `(restdir_string(${value}) COLLATE "C" ${sign} ${this.parameter(bound, 'text')})`
      const boundNumber = bound.trim() === '' ? NaN : Number(bound)
      if (Number.isNaN(boundNumber)) return asText
      // A string Number() reads in a form restdir_decimal does not: the process alone compares it exactly.
      this.unsureFilter.push(`(jsonb_typeof(${value}) = 'string' AND restdir_decimal(${text}) IS NULL AND ${text} ~ ${MAYBE_NUMBER})`)
      return `(CASE WHEN ${number} IS NOT NULL THEN ${number} ${sign} ${this.parameter(String(boundNumber), 'numeric')} ELSE ${asText} END)`
    })
    return `(${value} IS NOT NULL AND ${tests.join(' AND ')})`
  }

  /**
   * json-server 1.0's typed comparison (typedMatches, lib/listing/typed.ts): a missing field
   * passes no operator; jsonb's `=` is JavaScript's `===` for the scalars restdir_jsonb reads
   * (numbers by value, strings by their characters), an array or object operand equal to
   * nothing; `<` and the others are JavaScript's IsLessThan: a string operand against a
   * string, array or object field (its String(), restdir_string) by code unit, anything
   * else as numbers (null 0, booleans 0 and 1, a string or array as Number() reads its String(), an object NaN).
   */
  typed(filter: ListingCondition): string {
    const value = this.value(filter.field, true)
    const operands = filter.operands ?? []
    const type = `jsonb_typeof(${value})`
    const scalars = operands.filter(isScalar)
    switch (filter.comparison) {
      case 'notObject':
        return `(${value} IS NULL OR ${type} <> 'object')`
      case 'eq':
      case 'in':
        return scalars.length === 0 ? 'false' : `coalesce(${value} = ANY (${this.parameter(scalars.map((operand) => JSON.stringify(operand)), 'jsonb[]')}), false)`
      case 'ne':
        return scalars.length === 0 ? `(${value} IS NOT NULL)` : `coalesce(${value} <> ${this.parameter(JSON.stringify(scalars[0]), 'jsonb')}, false)`
      case 'contains':
      case 'startsWith':
      case 'endsWith': {
        const wanted = operandText(operands[0]).toLowerCase()
        if (!ascii.test(wanted)) return this.fail()
        const folded = `restdir_lower(${value} #>> '{}')`
        const needle = this.parameter(wanted, 'text')
        const test = filter.comparison === 'contains' ? `strpos(${folded}, ${needle}) > 0` : filter.comparison === 'startsWith' ? `starts_with(${folded}, ${needle})` : `right(${folded}, length(${needle})) = ${needle}`
        return `coalesce(${type} = 'string' AND ${test}, false)`
      }
    }
    const sign = { gt: '>', gte: '>=', lt: '<', lte: '<=' }[filter.comparison ?? '']
    if (sign === undefined || operands.length !== 1) return this.fail()
    const operand = operands[0]
    const number = `(CASE ${type} WHEN 'number' THEN (${value})::numeric WHEN 'boolean' THEN (CASE WHEN ${value} = 'true'::jsonb THEN 1 ELSE 0 END)::numeric WHEN 'null' THEN 0::numeric END)`
    const stringLike = typeof operand === 'string' || !isScalar(operand)
    // The operand's number as JavaScript's ToNumber makes it (null 0, booleans 0 and 1, a text as Number() reads it); an infinity is left to the process.
    const bound = stringLike ? Number(operandText(operand)) : Number(operand)
    if (!Number.isNaN(bound) && !Number.isFinite(bound)) return this.fail()
    const asNumber = Number.isNaN(bound) ? 'false' : `${number} ${sign} ${this.parameter(String(bound), 'numeric')}`
    if (stringLike) {
      const boundText = operandText(operand)
      if (!belowSurrogates.test(boundText)) return this.fail()
      return `coalesce(CASE WHEN ${type} IN ('string', 'object', 'array') THEN restdir_string(${value}) COLLATE "C" ${sign} ${this.parameter(boundText, 'text')} ELSE ${asNumber} END, false)`
    }
    // A string field (an array by its String()) against a number: as Number() reads it, which restdir_decimal does for plain decimals; other forms it might read are left to the process.
    const asString = `restdir_string(${value})`
    this.unsureFilter.push(`(${type} IN ('string', 'array') AND restdir_decimal(${asString}) IS NULL AND (${asString} ~ ${MAYBE_NUMBER} OR ${asString} ~ ${BLANK}))`)
    const asDecimal = `restdir_decimal(${asString}) ${sign} ${this.parameter(String(bound), 'numeric')}`
    return `coalesce(CASE WHEN ${type} IN ('string', 'array') THEN ${asDecimal} WHEN ${type} = 'object' THEN false ELSE ${asNumber} END, false)`
  }

  /**
   * sortDocs (lib/listing/sort.ts): missing values last whatever the order,
   * then numbers and numeric strings by value, booleans, strings by code unit.
   * Arrays and objects sort by their JSON text, which jsonb does not keep: rows holding them are unsure.
   * Three keys a field (sortKeys).
   */
  sort(keys: ListingPlan['sort']): SqlSortKey[] | undefined {
    const order: SqlSortKey[] = []
    for (const key of keys) {
      const value = this.value(key.field)
      order.push(...sortKeys(value, key.descending))
      this.unsureSort.push(unsureSort(value))
    }
    return this.failed ? undefined : order
  }

  /**
   * A necessary condition of the top-level equality filters that the GIN
   * indexes answer: the document holds one of the values as a string, as a
   * number or a boolean whose String() it is, or holds an array there (for a
   * typed equality, the very value).
   */
  prefilter(filters: readonly ListingCondition[]): string {
    const parts: string[] = []
    for (const filter of filters) {
      if (filter.operator === 'typed' && (filter.comparison === 'eq' || filter.comparison === 'in') && filter.field !== undefined) {
        // json-server 1.0's typed equality: the document holds one of the scalars there.
        const nested = (leaf: unknown) => filter.field!.split('.').reduceRight<unknown>((inner, segment) => ({ [segment]: inner }), leaf)
        const contains = (filter.operands ?? []).filter(isScalar).map((operand) => `doc @> ${this.parameter(JSON.stringify(nested(operand)), 'jsonb')}`)
        parts.push(contains.length === 0 ? 'false' : `(${contains.join(' OR ')})`)
        continue
      }
      if ((filter.operator !== 'eq' && filter.operator !== 'in') || filter.field === undefined || !filter.values?.length) continue
      const segments = filter.field.split('.')
      const candidates: unknown[] = []
      let usable = true
      for (const wanted of filter.values) {
        candidates.push(wanted)
        const number = Number(wanted)
        if (wanted.trim() !== '' && String(number) === wanted && Number.isFinite(number)) candidates.push(number)
        if (wanted === 'true' || wanted === 'false') candidates.push(wanted === 'true')
        // String() of an object: any object holds it.
        if (wanted === '[object Object]') usable = false
      }
      if (!usable) continue
      const nested = (leaf: unknown) => segments.reduceRight<unknown>((inner, segment) => ({ [segment]: inner }), leaf)
      const contains = candidates.map((candidate) => `doc @> ${this.parameter(JSON.stringify(nested(candidate)), 'jsonb')}`)
      parts.push(`(${contains.join(' OR ')} OR restdir_array_fields(doc) @> ${this.parameter([filter.field], 'text[]')})`)
    }
    return parts.length === 0 ? 'true' : parts.join(' AND ')
  }
}
