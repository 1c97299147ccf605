import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { ALL_SCHEMAS, schemaId } from './schemas';
import {
  addTextFormats,
  PAGE_TEXT,
  PAGE_TEXT_MESSAGE,
  STORABLE_TEXT,
  STORABLE_TEXT_MESSAGE,
} from './text-formats';

/** One validation failure: where (JSON pointer) and which rule. */
export interface ValidationProblem {
  pointer: string;
  rule: string;
  message: string;
}

/** A problem as one phrase, its field then what is wrong; `whole` names the document itself (pointer ''). */
export function describeProblem(problem: ValidationProblem, whole: string): string {
  return `${problem.pointer || whole} ${problem.message}`;
}

/** A compiled validator returning the problems, empty when valid. */
export type Validator = (data: unknown) => ValidationProblem[];

/** Compiles every schema once; `coerce` is for query strings. */
function build(coerce: boolean): Ajv2020 {
  const ajv = new Ajv2020({ allErrors: true, strict: true, coerceTypes: coerce, useDefaults: false });
  addFormats(ajv, ['date-time', 'uri']);
  addTextFormats(ajv);
  for (const schema of ALL_SCHEMAS) ajv.addSchema(schema);
  return ajv;
}

let plain: Ajv2020 | undefined;
let coercing: Ajv2020 | undefined;
const cache = new Map<string, Validator>();

/**
 * The validator for a schema by short name (`create-item`, `patch`, …), compiled once
 * per process. Query schemas (`list-query`, `campaign-query`) coerce text to numbers.
 */
export function validator(name: string): Validator {
  const hit = cache.get(name);
  if (hit) return hit;
  const isQuery = name.endsWith('-query');
  if (isQuery) coercing ??= build(true);
  else plain ??= build(false);
  const ajv = (isQuery ? coercing : plain) as Ajv2020;
  const fn = ajv.getSchema(schemaId(name)) as ValidateFunction | undefined;
  if (!fn) throw new Error(`no schema named ${name}`);
  const strict = isQuery ? rawIntegerCheck(fn.schema) : undefined;
  const forms = keyedForms(ajv, fn.schema);
  const v: Validator = (data) => {
    const raw = strict?.(data) ?? [];
    if (raw.length > 0) return raw;
    if (forms) return checkKeyedForm(forms, data);
    return fn(data) ? [] : toProblems(fn.errors ?? []);
  };
  cache.set(name, v);
  return v;
}

/** Turns ajv errors into problems naming the offending field as a JSON pointer. */
export function toProblems(errors: ErrorObject[]): ValidationProblem[] {
  const seen = new Set<string>();
  const out: ValidationProblem[] = [];
  // A value no branch of an anyOf takes for its type alone is told every type it may have
  // ("must be string, number or boolean"), not only the first branch's.
  const typesOnly = new Map<string, string[]>();
  for (const e of errors) {
    if (e.keyword !== 'anyOf') continue;
    const branches = errors.filter((o) => o !== e && o.instancePath === e.instancePath);
    if (branches.length > 1 && branches.every((o) => o.keyword === 'type')) {
      typesOnly.set(
        e.instancePath,
        branches.map((o) => String(o.params.type)),
      );
    }
  }
  // A branch the value does not even have the type of says nothing when another branch takes
  // that type: 0 for a nullable count is told its minimum, never also "must be null".
  const offType = new Set<ErrorObject>();
  for (const e of errors) {
    if (e.keyword !== 'anyOf' && e.keyword !== 'oneOf') continue;
    const branches = branchErrors(e, errors);
    const wrongType = [...branches].filter(([i, list]) =>
      list.some((o) => o.keyword === 'type' && o.schemaPath === `${e.schemaPath}/${i}/type`),
    );
    if (wrongType.length === 0 || wrongType.length === branches.size) continue;
    for (const [, list] of wrongType) for (const o of list) offType.add(o);
  }
  for (const e of errors) {
    if (offType.has(e)) continue;
    // anyOf/oneOf add a summary error after the branch errors; the branch errors say more.
    if (
      (e.keyword === 'anyOf' || e.keyword === 'oneOf') &&
      errors.some((o) => o !== e && o.instancePath === e.instancePath)
    )
      continue;
    let pointer = e.instancePath;
    let message = e.message ?? 'is invalid';
    const types = e.keyword === 'type' ? typesOnly.get(pointer) : undefined;
    if (types) message = `must be ${types.slice(0, -1).join(', ')} or ${types.at(-1)}`;
    if (e.keyword === 'additionalProperties') {
      pointer = `${pointer}/${escapePointer(String(e.params.additionalProperty))}`;
      message = 'is not a known field';
    } else if (e.keyword === 'required') {
      pointer = `${pointer}/${escapePointer(String(e.params.missingProperty))}`;
      message = 'is required';
    } else if (e.keyword === 'format' && e.params.format === STORABLE_TEXT) {
      message = STORABLE_TEXT_MESSAGE;
    } else if (e.keyword === 'format' && e.params.format === PAGE_TEXT) {
      message = PAGE_TEXT_MESSAGE;
    } else if (e.keyword === 'minProperties') {
      const limit = Number(e.params.limit);
      message = `must have at least ${limit} field${limit === 1 ? '' : 's'}`;
    } else if (e.keyword === 'const') {
      message = `must be ${JSON.stringify(e.params.allowedValue)}`;
    } else if (e.keyword === 'propertyNames') {
      pointer = `${pointer}/${escapePointer(String(e.params.propertyName))}`;
      message = 'is not an allowed key';
    }
    const key = `${pointer}|${e.keyword}`;
    if (seen.has(key)) continue;
    seen.add(key);
    // The whole document is '' (RFC 6901); '/' would name a member called ''.
    out.push({ pointer, rule: e.keyword, message });
  }
  return out;
}

/**
 * The errors of each branch of an anyOf/oneOf error, by branch index (as a string): those of its
 * own value, since one schema (a metadata value's, an array item's) checks many values.
 */
function branchErrors(summary: ErrorObject, errors: ErrorObject[]): Map<string, ErrorObject[]> {
  const prefix = `${summary.schemaPath}/`;
  const at = summary.instancePath;
  const branches = new Map<string, ErrorObject[]>();
  for (const o of errors) {
    if (o === summary || !o.schemaPath.startsWith(prefix)) continue;
    if (o.instancePath !== at && !o.instancePath.startsWith(`${at}/`)) continue;
    const index = o.schemaPath.slice(prefix.length).split('/')[0];
    branches.set(index, [...(branches.get(index) ?? []), o]);
  }
  return branches;
}

/** One form of a body that is one of several, each named by a key only it has. */
interface KeyedForm {
  key: string;
  validate: ValidateFunction;
}

/**
 * The forms of a schema that is a `oneOf` of objects each requiring a key of its own (bulk
 * delete's `{ids}` or `{all}`); undefined for any other schema.
 */
function keyedForms(ajv: Ajv2020, schema: unknown): KeyedForm[] | undefined {
  const branches = (schema as { oneOf?: { type?: string; required?: string[] }[] }).oneOf;
  if (!branches || branches.length < 2) return undefined;
  const keys = branches.map((b) => (b.type === 'object' && b.required?.length === 1 ? b.required[0] : ''));
  if (keys.includes('') || new Set(keys).size !== keys.length) return undefined;
  return branches.map((b, i) => ({ key: keys[i], validate: ajv.compile(b) }));
}

/**
 * Checks a body against the form its key names. Checked against every form, as a plain oneOf
 * is, a fault would be told once per form: the field the client meant called unknown by the
 * other form, and the first problem naming a key it never meant to send.
 */
function checkKeyedForm(forms: KeyedForm[], data: unknown): ValidationProblem[] {
  const isObject = data !== null && typeof data === 'object' && !Array.isArray(data);
  const present = isObject ? forms.filter((f) => Object.hasOwn(data, f.key)) : [];
  if (present.length > 1) {
    const names = present.map((f) => f.key);
    const message = `must have either ${names.slice(0, -1).join(', ')} or ${names.at(-1)}, not both`;
    return [{ pointer: '', rule: 'oneOf', message }];
  }
  // With neither key, the first form (the one documented first) says what is missing.
  const form = present[0] ?? forms[0];
  return form.validate(data) ? [] : toProblems(form.validate.errors ?? []);
}

function escapePointer(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

// Coercion alone would read `1e2`, `0x10` or ` 5` as integers; query integers must be plain digits.
function rawIntegerCheck(schema: unknown): (data: unknown) => ValidationProblem[] {
  const properties = (schema as { properties?: Record<string, { type?: string }> }).properties ?? {};
  const keys = Object.entries(properties)
    .filter(([, p]) => p.type === 'integer')
    .map(([k]) => k);
  return (data) => {
    if (data === null || typeof data !== 'object') return [];
    const problems: ValidationProblem[] = [];
    for (const key of keys) {
      const value = (data as Record<string, unknown>)[key];
      if (typeof value === 'string' && !/^-?[0-9]+$/.test(value)) {
        problems.push({ pointer: `/${key}`, rule: 'type', message: 'must be an integer' });
      }
    }
    return problems;
  };
}
