import { errorSummary } from './layout';

describe('the error summary', () => {
  it("links each field's message to its field, and lists what no field shows without a link", () => {
    const out = errorSummary({
      'knowledge.1.title': 'Entry 2: Give it a title.',
      _: 'Something else.',
    }).value;
    expect(out).toContain('<li><a href="#f-knowledge-1-title">Entry 2: Give it a title.</a></li>');
    expect(out).toContain('<li>Something else.</li>');
    expect(out).not.toContain('#f-_');
  });
});
