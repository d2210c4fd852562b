// The JSON Schema subset the admin API's route table uses (OpenAPI 3.1 schemas are JSON Schema
// 2020-12), and the check of a request body against one: the same object is the document's schema
// and the router's check, so the two cannot disagree. Messages name the field and what it must be.

export type Schema = {
  readonly type?: string | readonly string[];
  readonly description?: string;
  readonly properties?: Readonly<Record<string, Schema>>;
  readonly required?: readonly string[];
  readonly additionalProperties?: boolean | Schema;
  readonly items?: Schema;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly maxItems?: number;
  readonly enum?: readonly unknown[];
  readonly format?: string;
  readonly example?: unknown;
  readonly $ref?: string;
};

function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function typeMatches(want: string, have: string): boolean {
  return want === have || (want === 'number' && have === 'integer');
}

function checkObject(schema: Schema, v: Record<string, unknown>, at: string): string | null {
  for (const name of schema.required ?? []) if (!(name in v)) return `${at}${name} is required`;
  for (const [k, value] of Object.entries(v)) {
    const sub = schema.properties?.[k];
    if (sub) {
      const problem = check(sub, value, `${at}${k}`);
      if (problem) return problem;
    } else if (schema.additionalProperties === false) {
      return `${at}${k} is not a field of this request (fields: ${Object.keys(schema.properties ?? {}).join(', ')})`;
    }
  }
  return null;
}

function checkScalar(schema: Schema, v: unknown, what: string): string | null {
  if (typeof v === 'number') {
    if (schema.minimum !== undefined && v < schema.minimum)
      return `${what} must be at least ${schema.minimum}, got ${v}`;
    if (schema.maximum !== undefined && v > schema.maximum)
      return `${what} must be at most ${schema.maximum}, got ${v}`;
  }
  if (typeof v === 'string') {
    if (schema.minLength !== undefined && v.length < schema.minLength)
      return `${what} must be at least ${schema.minLength} characters`;
    if (schema.maxLength !== undefined && v.length > schema.maxLength)
      return `${what} must be at most ${schema.maxLength} characters`;
  }
  if (schema.enum && !schema.enum.includes(v))
    return `${what} must be one of ${schema.enum.map((e) => JSON.stringify(e)).join(', ')}`;
  return null;
}

/** What is wrong with `v` for `schema`, or null. `at`: the path of `v` so far ('' at the top). */
export function check(schema: Schema, v: unknown, at = ''): string | null {
  const what = at === '' ? 'the body' : at;
  const have = typeOf(v);
  if (schema.type !== undefined) {
    const types = typeof schema.type === 'string' ? [schema.type] : schema.type;
    if (!types.some((t) => typeMatches(t, have)))
      return `${what} must be ${types.map((t) => (t === 'integer' ? 'a whole number' : t === 'null' ? 'null' : `a${/^[aeiou]/.test(t) ? 'n' : ''} ${t}`)).join(' or ')}`;
  }
  if (have === 'object') return checkObject(schema, v as Record<string, unknown>, at === '' ? '' : `${at}.`);
  if (have === 'array') {
    const list = v as unknown[];
    if (schema.maxItems !== undefined && list.length > schema.maxItems)
      return `${what} takes at most ${schema.maxItems} entries`;
    for (let i = 0; i < list.length; i++) {
      const problem = schema.items ? check(schema.items, list[i], `${what}[${i}]`) : null;
      if (problem) return problem;
    }
    return null;
  }
  return checkScalar(schema, v, what);
}

/**
 * The first key given twice in one object of `text`, which must be valid JSON (JSON.parse keeps the
 * last of them silently), or null. One pass over the text, no recursion: bounded by the body limit.
 */
export function duplicateKey(text: string): string | null {
  // One frame per open object (its keys, and whether a key comes next) or array (null).
  const stack: ({ keys: Set<string>; keyNext: boolean } | null)[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    const top = stack[stack.length - 1];
    if (c === '{') stack.push({ keys: new Set(), keyNext: true });
    else if (c === '[') stack.push(null);
    else if (c === '}' || c === ']') stack.pop();
    else if (c === ',' && top) top.keyNext = true;
    else if (c === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      if (top?.keyNext) {
        const key = JSON.parse(text.slice(i, j + 1)) as string;
        if (top.keys.has(key)) return key;
        top.keys.add(key);
        top.keyNext = false;
      }
      i = j;
    }
  }
  return null;
}
