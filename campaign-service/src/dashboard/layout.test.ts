import { html } from './html';
import { errorSummary, field, textarea } from './layout';

describe('the error summary', () => {
  const form = (errors: Record<string, string>) =>
    html`<form>
  ${field({ name: 'name', label: 'Name', required: true, error: errors.name })}
  <fieldset><legend>Knowledge entries</legend>
    ${errors.knowledge ? html`<p class="error" id="f-knowledge" tabindex="-1">${errors.knowledge}</p>` : ''}
    ${field({ id: 'knowledge.1.title', name: 'knowledge.title', label: 'Entry 2 title', error: errors['knowledge.1.title'] })}
  </fieldset>
  ${textarea({ name: 'ipAllowList', label: 'IP allow-list', error: errors.ipAllowList })}
</form>`;

  it("links each field's message to its field, and lists what no field shows without a link", () => {
    const errors = { 'knowledge.1.title': 'Give it a title.', _: 'Something else.' };
    const out = errorSummary(errors, form(errors)).value;
    expect(out).toContain('<li><a href="#f-knowledge-1-title">Entry 2 title: give it a title.</a></li>');
    expect(out).toContain('<li>Something else.</li>');
    expect(out).not.toContain('#f-_');
  });

  it('lists the fields in the order of the form, whatever the order of the errors, each after its label', () => {
    const errors = {
      ipAllowList: 'IPv6 blocks need a prefix length.',
      knowledge: 'Keep at most 25 entries.',
      'knowledge.1.title': 'Use at most 200 characters.',
      name: 'Enter a name.',
      _: 'The device is too large.',
    };
    const items = [...errorSummary(errors, form(errors)).value.matchAll(/<li>([\s\S]*?)<\/li>/g)].map(
      (m) => m[1],
    );
    expect(items).toEqual([
      'The device is too large.',
      '<a href="#f-name">Name: enter a name.</a>',
      '<a href="#f-knowledge">Knowledge entries: keep at most 25 entries.</a>',
      '<a href="#f-knowledge-1-title">Entry 2 title: use at most 200 characters.</a>',
      // A message that starts with an abbreviation keeps its capitals.
      '<a href="#f-ipAllowList">IP allow-list: IPv6 blocks need a prefix length.</a>',
    ]);
  });

  it('lists a field it cannot find in the form last, by its message alone', () => {
    const errors = { other: 'Something is wrong here.', name: 'Enter a name.' };
    const items = [...errorSummary(errors, form(errors)).value.matchAll(/<li>([\s\S]*?)<\/li>/g)].map(
      (m) => m[1],
    );
    expect(items).toEqual([
      '<a href="#f-name">Name: enter a name.</a>',
      '<a href="#f-other">Something is wrong here.</a>',
    ]);
  });
});
