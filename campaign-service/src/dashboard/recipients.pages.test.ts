import { recipientActions } from './recipients.pages';

describe('recipient actions', () => {
  const pc = { csrfToken: 'tok' };
  const rpath = '/dashboard/p/prj_1/campaigns/cmp_1/recipients/rcp_1';

  it('offers edit, disable and delete while the campaign is editable', () => {
    for (const state of ['draft', 'upcoming']) {
      const out = recipientActions(pc, { state }, { isActive: true }, rpath).value;
      expect(out).toContain(`href="${rpath}/edit"`);
      expect(out).toContain(`action="${rpath}/disable"`);
      expect(out).toContain(`action="${rpath}/delete"`);
      expect(out).not.toContain('disabled');
    }
  });

  it('disables Edit and says why once the campaign is active or completed, leaving disable and delete', () => {
    for (const state of ['active', 'completed']) {
      const out = recipientActions(pc, { state }, { isActive: false }, rpath).value;
      expect(out).not.toContain(`${rpath}/edit`);
      expect(out).toMatch(
        /<button type="button" class="secondary" disabled aria-describedby="recipient-actions-why">Edit<\/button>/,
      );
      expect(out).toContain(`action="${rpath}/enable"`);
      expect(out).toContain(`action="${rpath}/delete"`);
      const [enable, remove] = (out.match(/<button type="submit"[^>]*>/g) ?? []).map((b) => b);
      expect(enable).not.toContain('disabled');
      expect(remove).not.toContain('disabled');
      expect(out).toContain('erase their data');
      expect(out).toMatch(new RegExp(`id="recipient-actions-why"[^>]*>[^<]*${state}`));
    }
  });
});
