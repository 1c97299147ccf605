import { createHash } from 'node:crypto';
import { brotliCompressSync, gzipSync, constants as zlibConstants } from 'node:zlib';
import {
  type DeviceSnapshot,
  isLogoUrl,
  LINK_PAGE_DEFAULT_COLORS,
  withoutBidiControls,
} from '@outreach/contracts';
import { isRightToLeft, RETRY_IN_SCRIPT, type UiStrings } from './i18n';

/** Escapes text for HTML element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** JSON that is safe inside a `<script type="application/json">` block. */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

const COLOR = /^(#[0-9a-f]{3,8}|[a-z]{3,20})$/i;

function color(value: string | undefined, fallback: string): string {
  return value && COLOR.test(value.trim()) ? value.trim() : fallback;
}

const LIGHT_TEXT = '#fff';
const DARK_TEXT = '#1d1d1f';

/** The red, green and blue of a #rgb / #rrggbb colour (alpha ignored), or null for a named one. */
function channels(value: string): number[] | null {
  const hex = /^#([0-9a-f]{3,8})$/i.exec(value)?.[1];
  if (!hex || hex.length === 5 || hex.length === 7) return null;
  const full = hex.length <= 4 ? [...hex.slice(0, 3)].map((c) => c + c).join('') : hex.slice(0, 6);
  return [0, 2, 4].map((i) => Number.parseInt(full.slice(i, i + 2), 16));
}

function toHex(rgb: number[]): string {
  return `#${rgb.map((c) => c.toString(16).padStart(2, '0')).join('')}`;
}

/** WCAG relative luminance of a #rgb / #rrggbb colour (alpha ignored), or null for a named one. */
function luminance(value: string): number | null {
  const rgb = channels(value);
  if (!rgb) return null;
  const [r, g, b] = rgb.map((v) => {
    const c = v / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

const DARK_TEXT_LUMINANCE = luminance(DARK_TEXT)!;

/** WCAG contrast ratio of two luminances. */
function contrast(a: number, b: number): number {
  return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
}

/** WCAG contrast ratio of two #rgb / #rrggbb colours. */
export function contrastRatio(a: string, b: string): number {
  const la = luminance(a);
  const lb = luminance(b);
  if (la === null || lb === null) throw new Error(`not a hex colour: ${la === null ? a : b}`);
  return contrast(la, lb);
}

/**
 * The text colour on the operator's primary colour: white, or near-black where white would be
 * the weaker contrast (a yellow or pastel brand colour), so labels stay readable.
 */
export function onColor(primary: string): string {
  const l = luminance(primary);
  if (l === null) return LIGHT_TEXT;
  return contrast(l, DARK_TEXT_LUMINANCE) > contrast(l, 1) ? DARK_TEXT : LIGHT_TEXT;
}

/**
 * The primary colour as the page paints it under text (the header, the customer's messages,
 * Send): the operator's colour where its text colour (`onColor`) reads on it (WCAG AA, 4.5:1),
 * else the least darker shade (under white) or lighter tint (under near-black) that does. A
 * mid-tone such as #e53935 reaches 4.22:1 with white and less with near-black.
 */
export function primaryUnderText(primary: string): string {
  const rgb = channels(primary);
  if (!rgb) return primary;
  const light = onColor(primary) === LIGHT_TEXT;
  const text = light ? 1 : DARK_TEXT_LUMINANCE;
  // Computed once per rendered page, not per request: a few hundred steps at most.
  for (let step = 0; step <= 255; step++) {
    const shade =
      step === 0
        ? primary
        : toHex(rgb.map((c) => Math.round(light ? c * (1 - step / 255) : c + (255 - c) * (step / 255))));
    if (contrast(luminance(shade)!, text) >= 4.5) return shade;
  }
  return light ? '#000000' : '#ffffff';
}

/** The focus ring: the primary colour where it stands out from the background (3:1), else black or white. */
export function focusOn(primary: string, background: string): string {
  const p = luminance(primary);
  const b = luminance(background);
  if (p === null || b === null || contrast(p, b) >= 3) return primary;
  return onColor(background);
}

// The greys the quieter texts may take, darker first, with their luminances.
const MUTED: ReadonlyArray<[string, number]> = ['#55555a', '#c9c9ce'].map((c) => [c, luminance(c)!]);

/**
 * The colour of the quieter texts set on the page's background (the intro, the status line):
 * grey that reads on it (WCAG AA, 4.5:1), dark grey on light backgrounds and light grey on dark
 * ones, else black or white, whichever contrasts more (one of them always reaches 4.5:1).
 */
export function mutedOn(background: string): string {
  const l = luminance(background);
  if (l === null) return MUTED[0][0];
  const readable = MUTED.find(([, m]) => contrast(l, m) >= 4.5);
  if (readable) return readable[0];
  return contrast(l, 0) >= contrast(l, 1) ? '#000' : '#fff';
}

const LINE = '#85858c';
const LINE_LUMINANCE = luminance(LINE)!;

/**
 * The input's border on the page's background (WCAG 1.4.11, 3:1): a mid grey where it stands out,
 * else the quieter texts' colour, which reads on it at 4.5:1.
 */
export function lineOn(background: string): string {
  const l = luminance(background);
  if (l === null || contrast(l, LINE_LUMINANCE) >= 3) return LINE;
  return mutedOn(background);
}

function logoUrl(value: string | undefined): string | null {
  return value && isLogoUrl(value) ? new URL(value).toString() : null;
}

/** A CSP source that allows exactly one inline element's text. */
function hashSource(text: string): string {
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
}

/**
 * The Content-Security-Policy of a page: only its own inline style and script run, each allowed
 * by the hash of its exact text (`script` null: no script at all). Hashes rather than nonces keep
 * the chat page identical for every visitor, so it is rendered and compressed once.
 */
export function contentSecurityPolicy(style: string, script: string | null): string {
  return [
    "default-src 'none'",
    `script-src ${script === null ? "'none'" : hashSource(script)}`,
    `style-src ${hashSource(style)}`,
    "img-src 'self' https: http: data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** What a page shows: the chat, or one refusal with its text. */
/** What the chat page is told of the server's limits. */
export interface ChatLimits {
  /** The longest message the server takes, checked before sending. */
  maxChars: number;
  /** The longest a reply may take (the assistant's deadline): a stream silent for longer is given up. */
  replyMs: number;
}

/** What a page shows: the chat, or the message of a refusal. */
export type PageBody =
  /** The chat: its limits as the server keeps them (see ChatLimits). */
  | ({ kind: 'chat' } & ChatLimits)
  | {
      kind: 'message';
      code: string;
      text: string;
      note?: string;
      /** The language of `text` where it is not the page's: an operator's own message is in the device's. */
      lang?: string;
    };

/** Inputs of one page render. */
export interface PageInput {
  /** The device language picked for the visitor, the one replies are read aloud in. */
  lang: string;
  /** The language `strings` are in: where `lang` is not shipped, another the visitor reads, or English. */
  textLang: string;
  strings: UiStrings;
  device?: Pick<DeviceSnapshot, 'styling' | 'voice' | 'name'>;
  body: PageBody;
}

const CSS = `
*{box-sizing:border-box}
[hidden]{display:none!important}
html,body{margin:0;height:100%}
body{font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:var(--bg);color:#1d1d1f;display:flex;flex-direction:column;min-height:100vh}
header{display:flex;flex-wrap:wrap;align-items:center;gap:.75rem;padding:.75rem 1rem;background:var(--primary);color:var(--on-primary)}
header img{height:2rem;width:auto;max-width:8rem;object-fit:contain;background:#fff;border-radius:.25rem}
header h1{flex:1 1 6rem;font-size:1.125rem;margin:0;font-weight:600;min-width:0;overflow-wrap:anywhere}
header button{margin-inline-start:auto;background:transparent;color:inherit;border:1px solid currentColor;border-radius:1rem;padding:.25rem .75rem;font:inherit;font-size:.875rem;cursor:pointer}
main{flex:1;width:100%;max-width:44rem;margin:0 auto;padding:1rem;display:flex;flex-direction:column;gap:.75rem}
#log{flex:1;display:flex;flex-direction:column;gap:.5rem;overflow-y:auto}
.msg{max-width:85%;padding:.5rem .75rem;border-radius:1rem;white-space:pre-wrap;word-wrap:break-word}
.msg .text{display:inline-block;max-width:100%}
.user{align-self:flex-end;background:var(--primary);color:var(--on-primary);border:1px solid transparent;border-end-end-radius:.25rem}
.assistant{align-self:flex-start;background:#fff;border:1px solid #d9d9de;border-end-start-radius:.25rem}
.notice{background:#fff;border:1px solid #d9d9de;border-radius:.75rem;padding:1.25rem;text-align:center;white-space:pre-wrap;overflow-wrap:anywhere}
#status{min-height:1.5em;font-size:.875rem;color:var(--muted)}
#intro{margin:0;text-align:center;color:var(--muted)}
#log:not(:empty)~#intro,.notice~#intro{display:none}
form{display:flex;flex-wrap:wrap;gap:.5rem;position:sticky;bottom:0;background:var(--bg);padding-bottom:.5rem}
textarea{flex:1 1 8rem;min-width:0;font:inherit;padding:.625rem .75rem;border:1px solid var(--line);border-radius:.75rem;resize:none;min-height:2.75rem;max-height:min(10rem,35vh)}
@media (max-height:30rem){form{position:static}}
textarea:focus,button:focus-visible{outline:3px solid var(--focus);outline-offset:2px}
header button:focus-visible{outline-color:var(--on-primary)}
header button[aria-pressed=true]{background:var(--on-primary);color:var(--primary)}
@media (forced-colors:active){header button[aria-pressed=true]{forced-color-adjust:none;background:Highlight;color:HighlightText}}
#send{font:inherit;font-weight:600;padding:0 1.125rem;border:1px solid transparent;border-radius:.75rem;background:var(--primary);color:var(--on-primary);cursor:pointer;min-height:2.75rem}
#send:disabled,#send[aria-disabled=true],textarea:disabled{opacity:.55;cursor:not-allowed}
textarea[readonly]{border-style:dashed;color:var(--muted);background:transparent}
.sr-only{position:absolute;width:1px;height:1px;padding:0;margin:-1px;overflow:hidden;clip:rect(0,0,0,0);border:0}
@media (prefers-reduced-motion:no-preference){.msg{animation:in .15s ease-out}@keyframes in{from{opacity:0;transform:translateY(4px)}}}
`;

// Runs in the browser. Every text from the server is set with textContent, never as HTML.
const SCRIPT = `
(function(){
var cfg=JSON.parse(document.getElementById('cfg').textContent);
var s=cfg.strings,log=document.getElementById('log'),form=document.getElementById('chat'),
input=document.getElementById('text'),send=document.getElementById('send'),status=document.getElementById('status'),
voiceBtn=document.getElementById('voice');
var base=location.pathname.replace(/\\/+$/,''),conversation=null,startKey=null,speaking=cfg.voice&&'speechSynthesis' in window;
// The form is sticky at the foot: at the page's end the newest message and the status show above it.
// The page follows what arrives only for a reader at its end: one who scrolled up to read is left there.
function down(){window.scrollTo(0,document.documentElement.scrollHeight);}
function atEnd(){return scrollY+innerHeight>=document.documentElement.scrollHeight-2;}
function setStatus(t){var end=atEnd();status.textContent=t||'';if(end)down();}
// A streamed reply is followed until its first line would leave the top: a long one is then read
// from its start, once; a reader who goes on to its end is followed from there.
// (Held where the reader left it: held at its start, the page may still count as at its end.)
function follow(d,was){if(!was||scrollY===d.heldAt)return;down();
  if(d.heldAt===undefined&&d.getBoundingClientRect().top<0){d.scrollIntoView({block:'start'});d.heldAt=scrollY;}}
${RETRY_IN_SCRIPT}
// Each message names its speaker for screen readers (the log is read out as messages arrive);
// its text goes in a span of its own, which a streamed reply fills in.
// The words are in the device's language even where the page's own texts fell back to English.
function bubble(cls,text){var d=document.createElement('div'),who=document.createElement('span'),t=document.createElement('span');
  d.className='msg '+cls;who.className='sr-only';who.textContent=(cls==='user'?s.you:s.assistant)+': ';t.className='text';t.dir='auto';t.textContent=text;
  if(cfg.lang!==document.documentElement.lang)t.lang=cfg.lang;
  d.appendChild(who);d.appendChild(t);log.appendChild(d);down();return d;}
function fill(d,text){d.lastChild.textContent=text;}
// Awaiting a reply blocks only sending: the input keeps focus (and a phone its keyboard).
var busy=false,over=false;
function lock(){busy=true;send.setAttribute('aria-disabled','true');}
function unlock(){if(over)return;busy=false;input.disabled=send.disabled=false;send.removeAttribute('aria-disabled');
  if(document.activeElement===document.body||document.activeElement===send)input.focus({preventScroll:true});}
// A refusal by the link's rules ends the page's conversation; a failure underneath (the model
// timing out, a store out of reach) ends only the message: the customer sends it again, since a
// reload would start, and pay for, a new conversation.
function ends(b){var c=b&&b.code,r=((b&&b.details)||{}).reason;
  if(c==='unavailable')return r==='campaign_not_active'||r==='device_inactive';
  if(c==='not_found')return r!=='conversation_not_found';
  return c==='forbidden'||c==='link_disabled'||c==='budget_exhausted'||c==='cooldown';}
// When the server says how long to wait, the customer is told; a message too long says the limit.
// Messages are limited per minute: a wait shorter than least seconds is the text's own "a moment".
function waitText(retryAfter,d,least){var sec=Number(retryAfter||d.retryAfterSeconds);return sec>=(least||1)?'\\n'+retryInText(s.retryIn,sec,document.documentElement.lang):'';}
function tooLongText(){return s.tooLong+' '+s.atMost.replace('{max}',Number(cfg.maxChars).toLocaleString(document.documentElement.lang));}
function failedText(){return navigator.onLine===false?s.offline:s.failed;}
function refusal(body,retryAfter){
  var d=(body&&body.details)||{},c=body&&body.code,t;
  if(c==='not_found')t=d.reason==='conversation_not_found'?s.conversationEnded:s.notFound;else if(c==='forbidden')t=s.forbidden;
  else if(c==='link_disabled')t=d.message||s.disabled;
  else if(c==='cooldown')t=(d.message||s.cooldown)+waitText(retryAfter,d);
  else if(c==='unavailable'&&!ends(body))t=s.noReply;
  else if(c==='unavailable'||c==='budget_exhausted')t=body.retryable===false?s.unavailableContact:s.unavailable;
  else if(c==='rate_limited')t=s.rateLimited+waitText(retryAfter,d,60);
  else if(c==='invalid_request'&&d.reason==='too_long')t=tooLongText();
  else t=failedText();
  return t;
}
// An operator's own message (disabledMessage, cooldownMessage) is in the device's language.
// The notice is an alert of its own after the log, not one more of its messages (read out twice);
// the focus stays in the input, read-only now, which keeps what was not sent readable and copyable.
function notice(t,own){over=true;input.readOnly=true;send.disabled=true;send.removeAttribute('aria-disabled');
  var n=document.createElement('p');n.className='notice';n.setAttribute('role','alert');n.dir='auto';n.textContent=t;
  if(own&&cfg.lang!==document.documentElement.lang)n.lang=cfg.lang;log.parentNode.insertBefore(n,log.nextSibling);setStatus('');
  n.scrollIntoView({block:'nearest'});}
// A refusal that ends the conversation is the page's notice; any other gives the message back to
// send again (a start refused so consumed nothing). Either way the unanswered message leaves the log.
// A conversation that expired (idle past its time) is forgotten: the message sent again starts a
// new one, as a reload would, without losing what the customer wrote.
function refused(b,retryAfter,again){var t=refusal(b,retryAfter),c=b&&b.code,d=(b&&b.details)||{};
  if(c==='not_found'&&d.reason==='conversation_not_found'){conversation=null;startKey=null;}
  again();if(ends(b))notice(t,(c==='link_disabled'||c==='cooldown')&&!!d.message);else{setStatus(t);unlock();}}
function fail(res,again){return res.json().catch(function(){return{};}).then(function(b){refused(b,res.headers.get('Retry-After'),again);});}
function primaryOf(tag){return String(tag||'').toLowerCase().split(/[-_]/)[0];}
// Safari on iPhones speaks only once speech has started inside a tap: an empty utterance in the
// tap that sends (or turns voice on) lets the reply that arrives later be read aloud.
var primed=false;function prime(){if(!speaking||primed)return;primed=true;try{speechSynthesis.speak(new SpeechSynthesisUtterance(''));}catch(e){}}
function speak(text){if(!speaking)return;try{speechSynthesis.cancel();var u=new SpeechSynthesisUtterance(text);u.lang=cfg.lang;
  // The device's named voice only speaks its own language: another language keeps the browser's pick.
  if(cfg.voiceName){var v=speechSynthesis.getVoices().filter(function(x){return x.name===cfg.voiceName;})[0];
    if(v&&primaryOf(v.lang)===primaryOf(cfg.lang))u.voice=v;}
  speechSynthesis.speak(u);}catch(e){}}
// A toggle keeps its label; aria-pressed says whether it is on (ARIA APG).
if(voiceBtn){voiceBtn.hidden=!('speechSynthesis' in window);
  var pressed=function(){voiceBtn.setAttribute('aria-pressed',String(speaking));};
  pressed();voiceBtn.addEventListener('click',function(){speaking=!speaking;if(!speaking)speechSynthesis.cancel();prime();pressed();});}
// The conversation starts with the first message, not with the page: a customer who only looks,
// or whose phone reloads the tab in the background, spends none of the link's interactions.
// Resolves with the conversation, or null when the start was refused: by the link's rules (the
// page's notice), or by a failure underneath (the message goes back to send again).
// Its key goes with every try of one start: a start made whose 201 was lost is answered again,
// not paid twice.
// A request whose answer stops coming (a phone changing networks) is given up: a start after
// START_MS, a reply silent for longer than the server lets one take; the message then goes back
// to send again, a start with the same key.
var START_MS=20000;
function watch(ms){var ctl=new AbortController(),t=0;function poke(){clearTimeout(t);t=setTimeout(function(){ctl.abort();},ms);}
  poke();return{signal:ctl.signal,poke:poke,stop:function(){clearTimeout(t);}};}
function newKey(){var b=new Uint8Array(18);crypto.getRandomValues(b);return btoa(String.fromCharCode.apply(null,b)).replace(/\\+/g,'-').replace(/\\//g,'_');}
function start(again){if(conversation)return Promise.resolve(conversation);setStatus(s.starting);startKey=startKey||newKey();
  var w=watch(START_MS);
  return fetch(base+'/conversations',{method:'POST',headers:{'Accept':'application/json','Idempotency-Key':startKey},signal:w.signal}).then(function(res){
    if(res.status!==201)return fail(res,again).then(function(){return null;});
    return res.json().then(function(b){conversation=b.conversationId;return conversation;});
  }).finally(w.stop);}
// A stream that stops before its done or error event was cut: its partial reply is no answer, and
// rejecting gives the message back to send again.
function readStream(res,target,again,w){
  var reader=res.body.getReader(),dec=new TextDecoder(),buf='',text='',ended=false;
  function handle(block){var ev='message',data='';block.split('\\n').forEach(function(l){if(l.indexOf('event:')===0)ev=l.slice(6).trim();else if(l.indexOf('data:')===0)data+=l.slice(5).trim();});
    if(!data)return;var p=JSON.parse(data);
    if(ev==='error'){ended=true;target.remove();refused(p,null,again);return;}
    if(ev==='done'){ended=true;if(p.reply!==text){text=p.reply;fill(target,text);}speak(text);return;}
    if(p.token){var was=atEnd();text+=p.token;fill(target,text);follow(target,was);}}
  function pump(){return reader.read().then(function(r){w.poke();if(r.done){if(buf.trim())handle(buf);if(!ended)throw new Error('stream cut');return;}buf+=dec.decode(r.value,{stream:true});
    var i;while((i=buf.indexOf('\\n\\n'))>=0){handle(buf.slice(0,i));buf=buf.slice(i+2);}return pump();});}
  return pump();
}
// No maxlength on the input: a browser cuts pasted text there without a word. Too long a message
// is said so before it is sent, and before a first message would pay for a conversation.
// A message sent while the last one awaits its reply stays in the input, and the customer is told why.
form.addEventListener('submit',function(e){e.preventDefault();var text=input.value.trim();if(!text||over||input.disabled)return;
  if(busy){setStatus(s.waitForReply);return;}
  if(Array.from(text).length>cfg.maxChars){setStatus(tooLongText());down();input.setAttribute('aria-invalid','true');return;}
  prime();
  var mine=bubble('user',text),failed=false;input.value='';grow();lock();
  // The log is busy while the reply streams in, so a screen reader reads it once, whole.
  var target=bubble('assistant','');log.setAttribute('aria-busy','true');
  // The server keeps only answered messages: an unanswered one leaves the log and goes back to the
  // input, once, before anything written meanwhile.
  function again(){if(failed)return;failed=true;mine.remove();input.value=input.value?text+'\\n'+input.value:text;grow();}
  // A reply is given up once silent for longer than the server's own deadline of one, and a margin.
  var w=null;
  start(again).then(function(id){if(!id){target.remove();again();return;}setStatus(s.thinking);w=watch(cfg.replyMs+15000);
    return fetch(base+'/conversations/'+encodeURIComponent(id)+'/messages',{method:'POST',headers:{'Content-Type':'application/json','Accept':'text/event-stream'},body:JSON.stringify({text:text}),signal:w.signal});})
  .then(function(res){if(!res)return;if(!res.ok){target.remove();return fail(res,again);}
    return readStream(res,target,again,w).then(function(){
      if(!failed)setStatus('');unlock();});})
  .catch(function(){target.remove();again();setStatus(failedText());unlock();}).finally(function(){log.removeAttribute('aria-busy');if(w)w.stop();});});
// The input is as tall as its text, up to its max-height; empty, as its placeholder, which wraps
// when zoomed in (measured as a value: not every browser counts a placeholder in its height).
function size(){var empty=!input.value;input.style.height='';if(empty)input.value=input.placeholder;
  input.style.height=input.scrollHeight+input.offsetHeight-input.clientHeight+'px';if(empty)input.value='';}
// Where the form is not pinned to the foot (a short screen), the one being typed in stays in view.
function grow(){var end=atEnd();size();if(end)down();if(document.activeElement===input)form.scrollIntoView({block:'nearest'});}
input.addEventListener('input',function(){grow();
  if(input.hasAttribute('aria-invalid')&&Array.from(input.value.trim()).length<=cfg.maxChars){input.removeAttribute('aria-invalid');setStatus('');}});
// Enter sends (Shift+Enter: a new line), unless it ends an IME composition.
input.addEventListener('keydown',function(e){if(e.key==='Enter'&&!e.shiftKey&&!e.isComposing&&e.keyCode!==229){e.preventDefault();form.requestSubmit();}});
// Tapping Send leaves focus (and a phone's keyboard) in the input.
send.addEventListener('mousedown',function(e){e.preventDefault();});
document.getElementById('intro').hidden=form.hidden=false;
size();addEventListener('resize',size);
unlock();
})();
`;

function scriptStrings({ readAloud: _label, noScript: _noScript, ...rest }: UiStrings) {
  return rest;
}

/** A rendered page and the policy that lets exactly its own style and script run. */
export interface RenderedPage {
  html: string;
  csp: string;
}

/** Renders a page; every operator-supplied string is escaped. */
export function renderPage(input: PageInput): RenderedPage {
  const { strings, device, body } = input;
  const styling = device?.styling ?? {};
  const primary = color(styling.primaryColor, LINK_PAGE_DEFAULT_COLORS.primaryColor);
  const background = color(styling.backgroundColor, LINK_PAGE_DEFAULT_COLORS.backgroundColor);
  // Operator text stored before bidi controls were refused must not reorder what customers read.
  const title = withoutBidiControls(styling.title ?? '').trim() || strings.title;
  const logo = logoUrl(styling.logoUrl);
  const voice = body.kind === 'chat' && device?.voice.enabled === true;
  // Everything on the primary colour carries text, so the page paints it in the shade that text reads on.
  const fill = primaryUnderText(primary);
  const style = `:root{--primary:${fill};--on-primary:${onColor(primary)};--bg:${background};--muted:${mutedOn(background)};--line:${lineOn(background)};--focus:${focusOn(fill, background)}}${CSS}`;
  // The attribute names the language the page's own texts are in, so screen readers pronounce them
  // right on the English fallback too; speech keeps the device's language (cfg.lang), since the
  // voice reads the assistant's replies, not these texts.
  const head = `<!doctype html>
<html lang="${escapeHtml(input.textLang)}"${isRightToLeft(input.textLang) ? ' dir="rtl"' : ''}>
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex,nofollow">
<title>${escapeHtml(title)}</title>
<style>${style}</style>
</head>
<body>
<header>${logo ? `<img src="${escapeHtml(logo)}" alt="">` : ''}<h1>${escapeHtml(title)}</h1>${
    voice
      ? `<button type="button" id="voice" aria-pressed="true" hidden>${escapeHtml(strings.readAloud)}</button>`
      : ''
  }</header>
<main>`;
  if (body.kind === 'message') {
    const note = body.note ? `\n${body.note}` : '';
    const html = `${head}
<p class="notice" role="alert" data-code="${escapeHtml(body.code)}"${body.lang ? ` lang="${escapeHtml(body.lang)}"` : ''} dir="auto">${escapeHtml(withoutBidiControls(body.text) + note)}</p>
</main>
</body>
</html>`;
    return { html, csp: contentSecurityPolicy(style, null) };
  }
  const cfg = {
    lang: input.lang,
    // The script's texts: the page's own HTML carries the rest.
    strings: scriptStrings(strings),
    voice,
    voiceName: device?.voice.voiceName ?? null,
    maxChars: body.kind === 'chat' ? body.maxChars : 0,
    replyMs: body.kind === 'chat' ? body.replyMs : 0,
  };
  // The JSON block is data, not script: CSP does not run it and the script reads it.
  const html = `${head}
<noscript><p class="notice">${escapeHtml(strings.noScript)}</p></noscript>
<div id="log" role="log" aria-live="polite" aria-label="${escapeHtml(strings.title)}"></div>
<p id="intro" hidden>${escapeHtml(strings.intro)}</p>
<p id="status" role="status" aria-live="polite"></p>
<form id="chat" autocomplete="off" hidden>
<label for="text" class="sr-only">${escapeHtml(strings.inputLabel)}</label>
<textarea id="text" rows="1" dir="auto" enterkeyhint="send" aria-describedby="status" placeholder="${escapeHtml(strings.placeholder)}" disabled></textarea>
<button id="send" type="submit" disabled>${escapeHtml(strings.send)}</button>
</form>
</main>
<script type="application/json" id="cfg">${scriptJson(cfg)}</script>
<script>${SCRIPT}</script>
</body>
</html>`;
  return { html, csp: contentSecurityPolicy(style, SCRIPT) };
}

/**
 * A page rendered once and kept as bytes, plain and compressed: phones ask for compression, and
 * the chat page compresses to about a third, so each view only picks the bytes to send.
 */
export class EncodedPage {
  readonly csp: string;
  private readonly identity: Buffer;
  private readonly gzip: Buffer;
  private readonly br: Buffer;

  constructor(page: RenderedPage) {
    this.csp = page.csp;
    this.identity = Buffer.from(page.html, 'utf8');
    this.gzip = gzipSync(this.identity, { level: 9 });
    this.br = brotliCompressSync(this.identity, {
      params: {
        [zlibConstants.BROTLI_PARAM_QUALITY]: 11,
        [zlibConstants.BROTLI_PARAM_SIZE_HINT]: this.identity.length,
      },
    });
  }

  /** The bytes for a negotiated content coding (anything else gets the page uncompressed). */
  bytes(coding: string | false): { body: Buffer; encoding?: 'br' | 'gzip' } {
    if (coding === 'br') return { body: this.br, encoding: 'br' };
    if (coding === 'gzip') return { body: this.gzip, encoding: 'gzip' };
    return { body: this.identity };
  }
}
