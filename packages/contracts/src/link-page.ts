/**
 * The languages the link page's own texts (labels, neutral refusals, default disabled and
 * cooldown texts) ship in; a device language not among them gets the English texts. Shared so
 * that the dashboard's device form names the same list the link runtime's table holds.
 */
export const LINK_PAGE_LANGUAGES = [
  'en',
  'de',
  'fr',
  'es',
  'it',
  'nl',
  'pt',
  'pl',
  'sv',
  'da',
  'nb',
  'fi',
  'cs',
  'tr',
] as const;

/** A language the link page's own texts ship in. */
export type LinkPageLanguage = (typeof LINK_PAGE_LANGUAGES)[number];

/**
 * An address the link page may show as a device's logo: absolute http: or https: only, never
 * javascript: or data:. The admin API refuses any other, and the page drops any other it is sent.
 */
export function isLogoUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}
