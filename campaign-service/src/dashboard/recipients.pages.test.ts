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

  it('disables the buttons and says why once the campaign is active or completed', () => {
    for (const state of ['active', 'completed']) {
      const out = recipientActions(pc, { state }, { isActive: false }, rpath).value;
      const buttons = out.match(/<button[^>]*>/g) ?? [];
      expect(buttons).toHaveLength(3);
      expect(out).not.toContain(`${rpath}/edit`);
      for (const b of buttons) {
        expect(b).toContain(' disabled');
        expect(b).toContain('aria-describedby="recipient-actions-why"');
      }
      expect(out).toMatch(new RegExp(`id="recipient-actions-why"[^>]*>[^<]*${state}`));
    }
  });
});
