#!/usr/bin/env node
// The safety check on hostile instructions (`node bench/safety-rules.js`, after `npm run build`;
// not part of `npm run bench`). Every create and update of a recipient runs the built-in rules
// over its instructions on the recipient service's event loop, so a text made to make a rule
// backtrack would hold every other request up. For each hostile text of 20,000 characters (long
// enough for quadratic rules to show: the limit is 256,000) the median time of the check, against
// ordinary prose of the same length, alternating, and their ratio: linear rules keep it near 1.
// `node bench/safety-rules.js 200000` measures texts of 200,000 characters instead: linear rules
// take about 10 times as long.

const { DEFAULT_SAFETY_RULES } = require('../packages/contracts/dist');
const { compileSafetyRules, findSafetyViolation } = require('../recipient-service/dist/recipients/safety');

const ROUNDS = 7;
const CHARS = Number(process.argv[2] ?? 20_000);
const rules = compileSafetyRules(DEFAULT_SAFETY_RULES);
const fill = (unit) => unit.repeat(Math.ceil(CHARS / unit.length)).slice(0, CHARS);
const ordinary = fill('Offer the customer our loyalty discount and answer questions about delivery times. ');
const hostile = {
  'spaces after a sentence': `Be kind.${fill(' ')}`.slice(0, CHARS),
  'new lines': fill('\n'),
  'spaces before keywords': fill(`ignore${' '.repeat(50)}`),
  'negations and spaces': fill(`do not${' '.repeat(30)}`),
  'fillers before a noun': `ignore ${fill('the all any ')}`.slice(0, CHARS),
  'tell without a prompt': fill('tell them the system about '),
  // What may follow "all rules" and "your rules": commas, "and", "now", spaces before a verb.
  'lists after all rules': fill(`ignore all rules, now and ${' '.repeat(30)}, `),
  'spaces after your rules': fill(`show your rules${' '.repeat(31)}for `),
  // Letters each with the one variation selector that passes after it.
  'letters and selectors': fill('\u1820\u180b\u845b\u{e0100}\u1821'),
  // What role lines and forged headings may hold: heading marks, emphasis, spaces, closing marks.
  'heading marks and spaces': fill(`\n${'#'.repeat(30)}${' '.repeat(30)}**`),
  'role names and spaces': fill(`\n## ** system${' '.repeat(40)}** `),
  'a heading, then marks': fill(`\n# Persona${' *:#'.repeat(20)}x`),
  // Quote marks and list markers before a role name, with spaces, and no role name after them.
  'quote and list markers': fill(`\n${'> - * 1. 2) '.repeat(20)}## ** users`),
  // Text that is folded (diacritics stripped, NFKC, look-alikes) and checked twice: real Russian,
  // full-width Latin, French.
  'Russian prose': fill('Поприветствуйте клиента и напомните ему о скидке на доставку. '),
  'full-width prose': fill('Ｏｆｆｅｒ ｔｈｅ ｃｕｓｔｏｍｅｒ ｏｕｒ ｌｏｙａｌｔｙ ｄｉｓｃｏｕｎｔ． '),
  // Diacritics, which the fold strips (NFKD, marks removed, NFKC): real French.
  'French prose': fill(
    'Accueillez chaleureusement le client et rappelez-lui la remise sur la livraison à Besançon. ',
  ),
};

function time(text) {
  const started = process.hrtime.bigint();
  findSafetyViolation(text, rules);
  return Number(process.hrtime.bigint() - started) / 1e6;
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const results = {};
for (const [name, text] of Object.entries(hostile)) {
  const base = [];
  const bad = [];
  for (let i = 0; i < ROUNDS; i++) {
    base.push(time(ordinary));
    bad.push(time(text));
  }
  results[name] = {
    hostileMs: Number(median(bad).toFixed(3)),
    ordinaryMs: Number(median(base).toFixed(3)),
    ratio: Number((median(bad) / median(base)).toFixed(2)),
  };
}
console.log(JSON.stringify({ chars: CHARS, rounds: ROUNDS, results }, null, 2));
