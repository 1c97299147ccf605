/**
 * The languages the link page's own texts (labels, neutral refusals, default disabled and
 * cooldown texts) ship in; a device language not among them gets those of the visitor's next
 * accepted device language that is, else the English texts. Shared so that the dashboard's
 * device form names the same list the link runtime's table holds.
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
 * The link page's colours where a device sets none. The page and the dashboard's device form both
 * read them here, so the form shows the colours customers see.
 */
export const LINK_PAGE_DEFAULT_COLORS = { primaryColor: '#2f5bea', backgroundColor: '#f5f5f7' } as const;

/** The page's heading where a device sets no title, in each language its own texts ship in. */
export const LINK_PAGE_TITLES: Readonly<Record<LinkPageLanguage, string>> = {
  en: 'Chat',
  de: 'Chat',
  fr: 'Discussion',
  es: 'Chat',
  it: 'Chat',
  nl: 'Chat',
  pt: 'Chat',
  pl: 'Czat',
  sv: 'Chatt',
  da: 'Chat',
  nb: 'Chat',
  fi: 'Keskustelu',
  cs: 'Chat',
  tr: 'Sohbet',
};

// A Norwegian device may say "no" (Norwegian at large) or "nn" (Nynorsk): Bokmål, which most
// Norwegians write, reads better to them than the English fallback.
const ALIASES: Readonly<Record<string, LinkPageLanguage>> = { no: 'nb', nn: 'nb' };

/** The shipped language the page's own texts take for a language tag, or null (they fall back to English). */
export function linkPageTextLanguage(tag: string): LinkPageLanguage | null {
  const subtag = tag.trim().toLowerCase().split(/[-_]/)[0];
  const shipped = ALIASES[subtag] ?? subtag;
  return (LINK_PAGE_LANGUAGES as readonly string[]).includes(shipped) ? (shipped as LinkPageLanguage) : null;
}

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
