#!/usr/bin/env node
// Knowledge retrieval under a hostile conversation (`node bench/knowledge-select.js`, after
// `npm run build`; not part of `npm run bench`). A device with the most knowledge the schema
// allows (200 entries of 20,000 characters) and a customer whose 20 messages of 4,000
// characters are random five-letter words, against an ordinary question on the same device:
// the median time of each, alternating, and their ratio. Every message of a conversation runs
// this on the link runtime's event loop. Then the device's index built as the link runtime builds
// it when a page of the device is first served (prepareKnowledge): its slices, and the longest.

const { prepareKnowledge, selectKnowledge } = require('../packages/contracts/dist/prompt');

const ROUNDS = 7;
const letters = 'abcdefghijklmnopqrstuvwxyz';
let seed = 42;
const random = () => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
};
const word = (n) => Array.from({ length: n }, () => letters[Math.floor(random() * 26)]).join('');
const text = (chars) => {
  const words = [];
  for (let length = 0; length < chars; length += 6) words.push(word(5));
  return words.join(' ');
};

const entries = Array.from({ length: 200 }, (_, i) => ({
  id: `k${i}`,
  title: `Topic ${i} ${word(7)}`,
  content: text(20_000),
}));
const hostile = Array.from({ length: 20 }, () => text(4000)).join('\n');
const ordinary = 'When will my order be delivered, and can I return it?';

function time(query) {
  const started = process.hrtime.bigint();
  selectKnowledge(entries, query, 3);
  return Number(process.hrtime.bigint() - started) / 1e6;
}

// The device's index is built on first use, as by the first message after a device snapshot.
const firstMs = time(ordinary);
const hostileMs = [];
const ordinaryMs = [];
for (let i = 0; i < ROUNDS; i++) {
  hostileMs.push(time(hostile));
  ordinaryMs.push(time(ordinary));
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// As the link runtime indexes a device snapshot on arrival: in slices, the event loop free in
// between. The longest slice is the longest the event loop is held.
async function prepared() {
  const copy = entries.map((e) => ({ ...e }));
  const slices = [];
  const started = process.hrtime.bigint();
  let resumed = started;
  await prepareKnowledge(copy, async () => {
    slices.push(Number(process.hrtime.bigint() - resumed) / 1e6);
    await new Promise((resolve) => setImmediate(resolve));
    resumed = process.hrtime.bigint();
  });
  slices.push(Number(process.hrtime.bigint() - resumed) / 1e6);
  return { totalMs: Number(process.hrtime.bigint() - started) / 1e6, slices };
}

(async () => {
  const prep = await prepared();
  const result = {
    entries: entries.length,
    entryChars: 20_000,
    hostileChars: hostile.length,
    firstUseMs: Number(firstMs.toFixed(1)),
    hostileMedianMs: Number(median(hostileMs).toFixed(2)),
    ordinaryMedianMs: Number(median(ordinaryMs).toFixed(2)),
    ratio: Number((median(hostileMs) / median(ordinaryMs)).toFixed(1)),
    preparedInSlices: prep.slices.length,
    preparedTotalMs: Number(prep.totalMs.toFixed(1)),
    preparedMedianSliceMs: Number(median(prep.slices).toFixed(2)),
    preparedLongestSliceMs: Number(Math.max(...prep.slices).toFixed(2)),
  };
  console.log(JSON.stringify(result, null, 2));
})();
