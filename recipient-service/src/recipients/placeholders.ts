/** The values a recipient's placeholders resolve to. */
export interface PlaceholderValues {
  externalId: string | null | undefined;
  label: string | null | undefined;
  metadata: Record<string, string>;
}

// `{name}` or `{meta.key}`; anything else in braces is not a placeholder and stays as written.
const PLACEHOLDER = /\{([A-Za-z_]+)(?:\.([A-Za-z0-9_-]{1,64}))?\}/g;

const EXTERNAL_ID_NAMES = new Set(['email', 'external_id']);
const LABEL_NAMES = new Set(['label', 'name', 'recipient']);

/**
 * Finds a metadata value for a `{meta.key}` placeholder. Placeholder names are
 * case-insensitive, so the key is too; metadata keys themselves are case-sensitive, so
 * an exact match wins and a case-insensitive match is used only when exactly one key
 * fits (two keys differing only in case make the placeholder ambiguous: empty text).
 */
function metadataValue(metadata: Record<string, string>, key: string): string {
  if (Object.hasOwn(metadata, key)) return metadata[key];
  const lower = key.toLowerCase();
  const matches = Object.keys(metadata).filter((k) => k.toLowerCase() === lower);
  return matches.length === 1 ? metadata[matches[0]] : '';
}

/** What one placeholder match stands for: its value, or itself when it names nothing known. */
function placeholderValue(
  values: PlaceholderValues,
  whole: string,
  rawName: string,
  key: string | undefined,
): string {
  const name = rawName.toLowerCase();
  if (key !== undefined) return name === 'meta' ? metadataValue(values.metadata, key) : whole;
  if (EXTERNAL_ID_NAMES.has(name)) return values.externalId ?? '';
  if (LABEL_NAMES.has(name)) return values.label ?? '';
  return whole;
}

/**
 * The length (UTF-16 units) `substitutePlaceholders` would return, without building the text:
 * a template of repeated placeholders may stand for far more text than is worth making.
 */
export function substitutedLength(text: string, values: PlaceholderValues): number {
  let length = text.length;
  for (const [whole, name, key] of text.matchAll(PLACEHOLDER)) {
    length += placeholderValue(values, whole, name, key).length - whole.length;
  }
  return length;
}

/**
 * Substitutes `{email}`/`{external_id}` (externalId), `{label}`/`{name}`/`{recipient}`
 * (label) and `{meta.key}` (a metadata value), case-insensitively. Unknown placeholders
 * are left untouched; a known one without a value becomes ''.
 */
export function substitutePlaceholders(text: string, values: PlaceholderValues): string {
  return text.replace(PLACEHOLDER, (whole, name: string, key: string | undefined) =>
    placeholderValue(values, whole, name, key),
  );
}
