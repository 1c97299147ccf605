import {
  composeSystemPrompt,
  knowledgeIndexed,
  prepareKnowledge,
  SAFETY_RULES,
  selectKnowledge,
} from './prompt';

const device = {
  name: 'Acme Help',
  persona: 'You are Ada, the friendly assistant of Acme.',
  customInstructions: 'Always answer in two sentences.',
};
const knowledge = [
  { id: 'k1', title: 'Opening hours', content: 'We are open Monday to Friday, 9 to 17.' },
  { id: 'k2', title: 'Returns', content: 'Items can be returned within 30 days with the receipt.' },
  { id: 'k3', title: 'Shipping', content: 'Shipping is free above 50 euros; returns are paid by us.' },
  { id: 'k4', title: 'Contact', content: 'Call us or write an email.' },
];

describe('composeSystemPrompt', () => {
  it('orders persona, safety, knowledge, then device and recipient instructions in append mode', () => {
    const prompt = composeSystemPrompt(
      device,
      { injectionMode: 'append', injectionInstructions: 'The customer is Bob; offer the upgrade.' },
      knowledge.slice(0, 1),
    );
    const at = (s: string) => prompt.indexOf(s);
    expect(at(device.persona)).toBeGreaterThanOrEqual(0);
    expect(at(SAFETY_RULES[0])).toBeGreaterThan(at(device.persona));
    expect(at('Opening hours')).toBeGreaterThan(at(SAFETY_RULES[0]));
    expect(at(device.customInstructions)).toBeGreaterThan(at('Opening hours'));
    expect(at('The customer is Bob')).toBeGreaterThan(at(device.customInstructions));
  });

  it('puts the recipient instructions in place of the device ones in replace mode', () => {
    const prompt = composeSystemPrompt(
      device,
      { injectionMode: 'replace', injectionInstructions: 'Speak only about the renewal.' },
      [],
    );
    expect(prompt).not.toContain(device.customInstructions);
    expect(prompt).toContain('Speak only about the renewal.');
    expect(prompt).toContain(device.persona);
    expect(prompt).toContain(SAFETY_RULES[1]);
  });

  it('keeps the device instructions when replace mode has no text to put in their place', () => {
    for (const injectionInstructions of [null, '', '   ']) {
      const prompt = composeSystemPrompt(device, { injectionMode: 'replace', injectionInstructions }, []);
      expect(prompt).toContain('# Instructions\nAlways answer in two sentences.');
    }
  });

  it('keeps the device instructions when the recipient has none in append mode', () => {
    const prompt = composeSystemPrompt(device, { injectionMode: 'append', injectionInstructions: null }, []);
    expect(prompt.endsWith(device.customInstructions)).toBe(true);
  });
});

describe('selectKnowledge', () => {
  it('takes the first entries when there is no text yet', () => {
    expect(selectKnowledge(knowledge, '', 2).map((k) => k.id)).toEqual(['k1', 'k2']);
  });

  it('ranks entries by lexical overlap, title words counting double', () => {
    expect(selectKnowledge(knowledge, 'How do returns work?', 2).map((k) => k.id)).toEqual(['k2', 'k3']);
    expect(selectKnowledge(knowledge, 'what are your opening hours', 1).map((k) => k.id)).toEqual(['k1']);
  });

  it('matches words up to inflection and accents', () => {
    expect(selectKnowledge(knowledge, 'I want to return this', 1).map((k) => k.id)).toEqual(['k2']);
    expect(selectKnowledge(knowledge, 'When do you open?', 1).map((k) => k.id)).toEqual(['k1']);
    expect(selectKnowledge(knowledge, 'was it shipped?', 1).map((k) => k.id)).toEqual(['k3']);
    const german = [
      { id: 'g1', title: 'Öffnungszeiten', content: 'Montag bis Freitag.' },
      { id: 'g2', title: 'Rückgabe', content: 'Rückgaben innerhalb von 30 Tagen.' },
    ];
    expect(selectKnowledge(german, 'Wie funktioniert die Ruckgabe?', 1).map((k) => k.id)).toEqual(['g2']);
  });

  it('weighs a word by how few entries mention it, so shared words do not decide', () => {
    const entries = [
      { id: 'a', title: 'Your order', content: 'Track your order online.' },
      { id: 'b', title: 'Guarantee', content: 'Your order has a two-year warranty.' },
    ];
    // "order" is in both entries (and a's title); only "warranty" tells them apart.
    expect(selectKnowledge(entries, 'warranty for my order', 1).map((k) => k.id)).toEqual(['b']);
  });

  it('does not match short words as prefixes of others', () => {
    const entries = [
      { id: 'a', title: 'Art classes', content: 'Painting for beginners.' },
      { id: 'b', title: 'Parking', content: 'Free parking behind the building.' },
    ];
    expect(selectKnowledge(entries, 'art', 1).map((k) => k.id)).toEqual(['a']);
    expect(selectKnowledge(entries, 'par', 2).map((k) => k.id)).toEqual(['a', 'b']);
  });

  it('reads only the end of a long conversation, so its size bounds the work', () => {
    const entries = [
      { id: 'a', title: 'Warranty', content: 'Two years on every order.' },
      { id: 'b', title: 'Delivery', content: 'Parcels ship within a day.' },
    ];
    // The first message asks about the warranty; thousands of words later, about delivery.
    const early = 'warranty '.repeat(50);
    const filler = Array.from({ length: 2000 }, (_, i) => `w${i.toString(36)}x`).join(' ');
    expect(selectKnowledge(entries, `${early}${filler} delivery`, 1).map((k) => k.id)).toEqual(['b']);
    expect(selectKnowledge(entries, `${early} delivery`, 2).map((k) => k.id)).toEqual(['a', 'b']);
  });

  it('matches the same words as before it indexed entries: inflections both ways, accents, titles', () => {
    const entries = [
      { id: 'a', title: 'Opening hours', content: 'We open at nine.' },
      { id: 'b', title: 'Rückgabe', content: 'Returns within thirty days.' },
    ];
    expect(selectKnowledge(entries, 'opens', 1).map((k) => k.id)).toEqual(['a']);
    expect(selectKnowledge(entries, 'open', 1).map((k) => k.id)).toEqual(['a']);
    expect(selectKnowledge(entries, 'returned', 1).map((k) => k.id)).toEqual(['b']);
    expect(selectKnowledge(entries, 'ruckgabe', 1).map((k) => k.id)).toEqual(['b']);
  });

  it('falls back to the first entries when nothing matches', () => {
    expect(selectKnowledge(knowledge, 'zzz qqq', 1).map((k) => k.id)).toEqual(['k1']);
  });
});

describe('prepareKnowledge', () => {
  // Entries of distinct words, enough that indexing them takes well over one 5 ms slice.
  const big = () =>
    Array.from({ length: 120 }, (_, i) => ({
      id: `k${i}`,
      title: `Topic ${i}`,
      content: Array.from({ length: 2500 }, (_, j) => `w${i}x${j.toString(36)}`).join(' '),
    }));

  it('indexes a large device in slices, the event loop free in between', async () => {
    const entries = big();
    let pauses = 0;
    await prepareKnowledge(entries, async () => {
      pauses++;
      await new Promise((resolve) => setImmediate(resolve));
    });
    expect(pauses).toBeGreaterThan(2);
    // Prepared: what a message picks is what a fresh index of the same entries picks.
    const fresh = entries.map((e) => ({ ...e }));
    for (const text of ['w7x1 w7x2 topic', 'w119x0', 'w3xzz w44x10'])
      expect(selectKnowledge(entries, text, 3).map((k) => k.id)).toEqual(
        selectKnowledge(fresh, text, 3).map((k) => k.id),
      );
  });

  it('shares one preparation among the callers who ask while it runs, and says when it is done', async () => {
    const entries = big();
    let builds = 0;
    const pause = async () => {
      builds++;
      await new Promise((resolve) => setImmediate(resolve));
    };
    const first = prepareKnowledge(entries, pause);
    let secondBuilds = 0;
    const second = prepareKnowledge(entries, async () => {
      secondBuilds++;
    });
    expect(knowledgeIndexed(entries)).toBe(false);
    await Promise.all([first, second]);
    expect(second).toBe(first);
    expect(builds).toBeGreaterThan(2);
    expect(secondBuilds).toBe(0);
    expect(knowledgeIndexed(entries)).toBe(true);
    // Ready: asking again costs nothing.
    let again = 0;
    await prepareKnowledge(entries, async () => {
      again++;
    });
    expect(again).toBe(0);
  });

  it('leaves off once a message indexed the entries meanwhile', async () => {
    const entries = big();
    let pauses = 0;
    await prepareKnowledge(entries, async () => {
      pauses++;
      // A message arrives during the first pause: it cannot wait, and indexes all at once.
      if (pauses === 1) expect(selectKnowledge(entries, 'w5x3', 1).map((k) => k.id)).toEqual(['k5']);
    });
    expect(pauses).toBe(1);
    expect(selectKnowledge(entries, 'w9x3', 1).map((k) => k.id)).toEqual(['k9']);
  });
});
