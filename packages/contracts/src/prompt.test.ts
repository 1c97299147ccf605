import { composeSystemPrompt, SAFETY_RULES, selectKnowledge } from './prompt';

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

  it('falls back to the first entries when nothing matches', () => {
    expect(selectKnowledge(knowledge, 'zzz qqq', 1).map((k) => k.id)).toEqual(['k1']);
  });
});
