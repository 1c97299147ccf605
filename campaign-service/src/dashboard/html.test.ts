import { escapeHtml, html, raw } from './html';

describe('html template', () => {
  it('escapes every interpolation by default', () => {
    const evil = `<script>alert("x")</script>' onload='`;
    const out = html`<p title="${evil}">${evil}</p>`.value;
    expect(out).not.toContain('<script>');
    expect(out).not.toContain(`${`'`.repeat(1)} onload`);
    expect(out).toBe(`<p title="${escapeHtml(evil)}">${escapeHtml(evil)}</p>`);
  });

  it('nests templates and arrays without double escaping', () => {
    const items = ['a&b', 'c'].map((t) => html`<li>${t}</li>`);
    expect(html`<ul>${items}</ul>`.value).toBe('<ul><li>a&amp;b</li><li>c</li></ul>');
  });

  it('renders nothing for null, undefined and false, and numbers as text', () => {
    expect(html`${null}${undefined}${false}${0}${raw('<b>')}`.value).toBe('0<b>');
  });
});
