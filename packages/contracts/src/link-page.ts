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
