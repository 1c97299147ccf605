import type { DeviceSnapshot } from '@outreach/contracts';
import { pickLanguage, type UiStrings } from './i18n';
import { type ChatLimits, EncodedPage, renderPage } from './render';

/** The chat page of one device in one language, rendered and compressed once. */
export interface ChatPage {
  lang: string;
  strings: UiStrings;
  encoded: EncodedPage;
}

// Accept-Language values are client-chosen: bound what one device remembers of them.
const MAX_HEADERS_PER_DEVICE = 256;

interface DevicePages {
  byHeader: Map<string, ChatPage>;
  byLang: Map<string, ChatPage>;
}

/**
 * Chat pages rendered once per device snapshot and language. A device change arrives as a new
 * snapshot object, so entries are keyed by the snapshot itself: a newer version finds nothing
 * cached and renders afresh, and the old entries go with the old snapshot.
 */
export class ChatPages {
  private readonly byDevice = new WeakMap<DeviceSnapshot, DevicePages>();
  private readonly noDevice: DevicePages = { byHeader: new Map(), byLang: new Map() };

  /**
   * `limits` are the server's, as the page is told them; `firstPage` is told of each device
   * snapshot the first time one of its pages is asked for.
   */
  constructor(
    private readonly limits: ChatLimits,
    private readonly firstPage: (device: DeviceSnapshot) => void = () => {},
  ) {}

  /** The chat page for a visitor sending `acceptLanguage`, on `device`'s link. */
  page(acceptLanguage: string, device: DeviceSnapshot | undefined): ChatPage {
    let pages = device ? this.byDevice.get(device) : this.noDevice;
    if (!pages) {
      pages = { byHeader: new Map(), byLang: new Map() };
      this.byDevice.set(device as DeviceSnapshot, pages);
      this.firstPage(device as DeviceSnapshot);
    }
    const hit = pages.byHeader.get(acceptLanguage);
    if (hit) return hit;
    const { lang, textLang, strings } = pickLanguage(acceptLanguage, device);
    // The page's texts may be in another language than the one the assistant speaks (the visitor's
    // next accepted one): both name the rendering.
    const key = `${lang} ${textLang}`;
    let page = pages.byLang.get(key);
    if (!page) {
      // The page finds its link in its own address, so one rendering serves every link of the device.
      const rendered = renderPage({
        lang,
        textLang,
        strings,
        device,
        body: { kind: 'chat', maxChars: this.limits.maxChars, replyMs: this.limits.replyMs },
      });
      page = { lang, strings, encoded: new EncodedPage(rendered) };
      pages.byLang.set(key, page);
    }
    if (pages.byHeader.size >= MAX_HEADERS_PER_DEVICE) pages.byHeader.clear();
    pages.byHeader.set(acceptLanguage, page);
    return page;
  }
}
