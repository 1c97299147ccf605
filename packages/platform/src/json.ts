/**
 * The JSON text of a value JSON.parse gave, as JSON.stringify writes it (no spaces), at any depth
 * JSON.parse takes: JSON.stringify recurses and overflows the call stack past a few thousand
 * levels (30,000 nested arrays in a request body, say), where this goes on with a stack of its
 * own. With `sortKeys`, object keys are in code-unit order, so that equal values always give equal
 * text (a request's fingerprint). Without, JSON.stringify itself writes it when it can.
 */
export function jsonText(value: unknown, options: { sortKeys?: boolean } = {}): string {
  if (!options.sortKeys) {
    try {
      return JSON.stringify(value);
    } catch (err) {
      // Nested too deep for its recursion; anything else (a cycle, a BigInt) is the caller's.
      if (!(err instanceof RangeError)) throw err;
    }
  }
  return writeJson(value, options.sortKeys === true);
}

/** A container being written: its values, its keys (an object's) and the next one's index. */
interface Open {
  values: unknown[];
  keys: string[] | null;
  next: number;
}

function writeJson(root: unknown, sortKeys: boolean): string {
  const out: string[] = [];
  const open: Open[] = [];
  const write = (value: unknown): void => {
    if (Array.isArray(value)) {
      out.push('[');
      open.push({ values: value, keys: null, next: 0 });
    } else if (value !== null && typeof value === 'object') {
      const object = value as Record<string, unknown>;
      // Keys whose value JSON has no text for are left out, as JSON.stringify leaves them.
      const keys = Object.keys(object).filter((k) => object[k] !== undefined);
      if (sortKeys) keys.sort();
      out.push('{');
      open.push({ values: keys.map((k) => object[k]), keys, next: 0 });
    } else {
      out.push(JSON.stringify(value) ?? 'null');
    }
  };
  write(root);
  for (let top = open.at(-1); top !== undefined; top = open.at(-1)) {
    if (top.next === top.values.length) {
      out.push(top.keys ? '}' : ']');
      open.pop();
      continue;
    }
    const i = top.next++;
    if (i > 0) out.push(',');
    if (top.keys) out.push(JSON.stringify(top.keys[i]), ':');
    write(top.values[i]);
  }
  return out.join('');
}
