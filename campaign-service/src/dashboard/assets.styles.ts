import { LINK_PAGE_DEFAULT_COLORS } from '@outreach/contracts';
import { CHART_PHONE_TEXT } from './usage-chart';

/** The dashboard's one stylesheet: mobile first, system fonts, AA contrast, visible focus. */
export const APP_CSS = `
:root{--fg:#1a1a1a;--muted:#4a4f57;--bg:#fff;--panel:#f4f5f7;--line:#c9ced6;--accent:#0b57d0;--accent-fg:#fff;
--ok:#136c2e;--ok-bg:#e3f4e8;--warn:#7a4a00;--warn-bg:#fff3d6;--err:#a8151b;--err-bg:#fde8e8;--focus:#ffbf47}
*{box-sizing:border-box}
html{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;font-size:16px;line-height:1.5;color:var(--fg);background:var(--bg)}
body{margin:0}
/* Operator text (names, slugs, URLs) may hold no break point: it wraps rather than widen the page. */
main,.top,.foot{overflow-wrap:break-word}
a{color:var(--accent)}
a:hover{text-decoration-thickness:2px}
:focus-visible{outline:3px solid var(--focus);outline-offset:2px;box-shadow:0 0 0 5px var(--fg)}
.skip{position:absolute;left:-999px;top:0;background:var(--fg);color:#fff;padding:.5rem 1rem;z-index:10}
.skip:focus{left:0}
.top{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center;justify-content:space-between;padding:.75rem 1rem;background:#10243e;color:#fff}
.top a{color:#fff}
.brand{min-width:0;overflow-wrap:anywhere}
.brand a{font-weight:700;text-decoration:none;font-size:1.1rem}
.brand .project{margin-left:.5rem;opacity:.95}
.who{display:flex;flex-wrap:wrap;gap:.75rem;align-items:center;font-size:.9rem;min-width:0;overflow-wrap:anywhere}
.who button.link{color:#fff}
.sections ul{display:flex;flex-wrap:wrap;gap:.25rem;list-style:none;margin:0;padding:.25rem .5rem;background:var(--panel);border-bottom:1px solid var(--line)}
.sections a{display:block;padding:.6rem .75rem;text-decoration:none;color:var(--fg);border-radius:6px;white-space:nowrap}
.sections a[aria-current=page]{background:var(--accent);color:var(--accent-fg)}
main{padding:1rem;max-width:72rem;margin:0 auto}
main:focus{outline:none}
.foot{padding:1rem;color:var(--muted);font-size:.85rem;border-top:1px solid var(--line);text-align:center}
h1{font-size:1.5rem;margin:.5rem 0 1rem}
h1,h2,h3,legend,label{overflow-wrap:anywhere}
h2{font-size:1.2rem;margin:1.5rem 0 .75rem}
.crumbs ol{list-style:none;display:flex;flex-wrap:wrap;gap:.25rem;padding:0;margin:0 0 .5rem;font-size:.9rem}
.crumbs li{min-width:0;overflow-wrap:anywhere}
.crumbs li+li::before{content:"/";margin-right:.25rem;color:var(--muted)}
.field{margin:0 0 1rem}
.field label{display:block;font-weight:600;margin-bottom:.25rem}
.req{font-weight:400;color:var(--muted);font-size:.85rem}
.hint{margin:0 0 .25rem;color:var(--muted);font-size:.9rem}
.error{margin:0 0 .25rem;color:var(--err);font-weight:600}
.has-error input,.has-error select,.has-error textarea{border-color:var(--err);border-width:2px}
input,select,textarea{font:inherit;width:100%;padding:.55rem .6rem;border:1px solid #6b7280;border-radius:6px;background:#fff;color:var(--fg);min-height:44px}
input[type=checkbox],input[type=radio]{width:1.25rem;height:1.25rem;min-height:0;vertical-align:middle}
input[type=color]{padding:.2rem;height:44px}
textarea{min-height:6rem}
fieldset{border:1px solid var(--line);border-radius:8px;padding:.75rem 1rem;margin:0 0 1rem}
legend{font-weight:700;padding:0 .25rem}
.check{display:flex;gap:.5rem;align-items:center;margin:.25rem 0}
.check label{font-weight:400;margin:0}
button,.button{display:inline-block;font:inherit;font-weight:600;padding:.6rem 1rem;border-radius:6px;border:2px solid var(--accent);background:var(--accent);color:var(--accent-fg);cursor:pointer;text-decoration:none;min-height:44px;line-height:1.4}
button.secondary,.button.secondary{background:#fff;color:var(--accent)}
button.danger,.button.danger{background:var(--err);border-color:var(--err);color:#fff}
button.link{background:none;border:none;padding:0;color:var(--accent);text-decoration:underline;min-height:0;font-weight:400}
button:disabled{opacity:.6;cursor:not-allowed}
form[data-busy] button[aria-disabled=true],form[data-busy] input[aria-disabled=true]{opacity:.6;cursor:progress}
.actions{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center;margin:1rem 0}
form.inline{display:inline}
.notice{border-left:5px solid;padding:.75rem 1rem;margin:0 0 1rem;border-radius:4px;overflow-wrap:anywhere}
.notice p{margin:.25rem 0}
.notice.ok{background:var(--ok-bg);border-color:var(--ok)}
.notice.warn{background:var(--warn-bg);border-color:var(--warn)}
.notice.error{background:var(--err-bg);border-color:var(--err)}
.badge{display:inline-block;padding:.1rem .55rem;border-radius:999px;font-size:.8rem;font-weight:700;text-transform:uppercase;letter-spacing:.03em;border:1px solid}
.state-draft{background:#eceef1;color:#353a42;border-color:#8a919c}
.state-upcoming{background:#e6efff;color:#0a3f99;border-color:#0a3f99}
.state-active{background:var(--ok-bg);color:var(--ok);border-color:var(--ok)}
.state-completed{background:#f1eafb;color:#5b2a91;border-color:#5b2a91}
.state-halted{background:var(--err-bg);color:var(--err);border-color:var(--err)}
.badge.off{background:var(--err-bg);color:var(--err);border-color:var(--err)}
.badge.on{background:var(--ok-bg);color:var(--ok);border-color:var(--ok)}
.badge.used-up{background:var(--warn-bg);color:var(--warn);border-color:var(--warn)}
.cards{list-style:none;padding:0;margin:0;display:grid;grid-template-columns:minmax(0,1fr);gap:.75rem}
.card{border:1px solid var(--line);border-radius:8px;padding:.75rem 1rem;background:#fff;min-width:0;overflow-wrap:anywhere}
.card h2,.card h3{margin:0 0 .25rem;font-size:1.05rem}
.meta{color:var(--muted);font-size:.9rem;margin:.25rem 0}
dl.facts{display:grid;grid-template-columns:1fr;gap:.1rem .75rem;margin:0 0 1rem}
dl.facts dt{font-weight:600;color:var(--muted);font-size:.9rem}
dl.facts dd{margin:0 0 .5rem;min-width:0;overflow-wrap:anywhere}
.table-wrap{position:relative;overflow-x:auto;border:1px solid var(--line);border-radius:8px;margin:0 0 1rem}
table{border-collapse:collapse;width:100%;font-size:.95rem}
th,td{padding:.5rem .6rem;text-align:left;border-bottom:1px solid var(--line);vertical-align:top}
/* A long name wraps in its cell instead of widening the table; figures stay whole. */
td{overflow-wrap:anywhere}
/* A button's word is never broken letter by letter: the table scrolls sideways instead. */
td button{overflow-wrap:normal;white-space:nowrap}
td.num{overflow-wrap:normal}
th{background:var(--panel)}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9em;overflow-wrap:anywhere}
pre.prompt{white-space:pre-wrap;background:var(--panel);border:1px solid var(--line);border-radius:8px;padding:1rem;overflow-wrap:anywhere}
.secret{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center}
.secret output{flex:1 1 16rem;font-family:ui-monospace,monospace;background:var(--panel);border:1px solid var(--line);padding:.6rem;border-radius:6px;overflow-wrap:anywhere}
figure{margin:0 0 1rem}
.chart{width:100%;height:auto;max-height:260px}
.chart .bar{fill:var(--accent)}
.chart .axis{stroke:var(--muted);stroke-width:1}
/* In the chart's own units: a phone draws the chart at about half size (see CHART_PHONE_TEXT). */
.chart text{fill:var(--muted);font-size:${CHART_PHONE_TEXT}px}
.chart .wide-only{display:none}
progress{width:100%;height:1.25rem}
.meter{margin:.5rem 0 1rem}
.preview{border:1px solid var(--line);border-radius:12px;overflow:hidden;max-width:22rem;background:#fff}
.preview .pv-head{padding:.75rem 1rem;font-weight:700;background:${LINK_PAGE_DEFAULT_COLORS.primaryColor};color:#fff}
.preview .pv-body{padding:1rem;background:${LINK_PAGE_DEFAULT_COLORS.backgroundColor};min-height:8rem}
.preview .pv-bubble{background:#fff;border-radius:10px;padding:.5rem .75rem;margin:0 0 .5rem;max-width:85%;box-shadow:0 1px 1px rgba(0,0,0,.1);color:#1a1a1a}
.preview .pv-user{margin-left:auto;background:${LINK_PAGE_DEFAULT_COLORS.primaryColor};color:#fff}
.preview .pv-input{border-top:1px solid var(--line);padding:.5rem 1rem;color:#555;background:#fff}
.grid2{display:grid;grid-template-columns:1fr;gap:1rem}
.filters{display:flex;flex-wrap:wrap;gap:.75rem;align-items:flex-end}
.filters .field{margin:0;flex:1 1 12rem;min-width:0}
.visually-hidden{position:absolute!important;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
@media (min-width:48rem){
  main{padding:1.5rem 2rem}
  h1{font-size:1.8rem}
  dl.facts{grid-template-columns:max-content 1fr}
  dl.facts dd{margin:0}
  .grid2{grid-template-columns:1fr 1fr}
  .cards{grid-template-columns:repeat(auto-fill,minmax(min(20rem,100%),1fr))}
  .chart text{font-size:11px}
  .chart .wide-only{display:inline}
}
`;
