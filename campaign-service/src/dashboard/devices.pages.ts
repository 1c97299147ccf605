import type Router from '@koa/router';
import {
  LINK_PAGE_DEFAULT_COLORS,
  LINK_PAGE_LANGUAGES,
  LINK_PAGE_TITLES,
  linkPageTextLanguage,
  type ValidationProblem,
} from '@outreach/contracts';
import { AppError } from '@outreach/platform';
import type { Context } from 'koa';
import {
  campaignsUsing,
  createDevice,
  type Device,
  type DeviceInput,
  deleteDevice,
  deviceRuleProblems,
  getDevice,
  listDevices,
  updateDevice,
} from '../devices/devices.service';
import { compileAdminSchemas } from '../http/admin.schemas';
import { actingAs, type DashboardDeps, formOf, projectContext, sendPage } from './context';
import { deviceFieldErrors } from './device-errors';
import { actOnce, onceField } from './form-once';
import type { FieldErrors, Form } from './forms';
import { html } from './html';
import {
  breadcrumbs,
  confirmOrBack,
  csrfField,
  field,
  layout,
  notice,
  type PageContext,
  projectPath,
  textarea,
  withErrorSummary,
} from './layout';
import { baseFields, baseFrom, compareWithBase, fingerprints, quoted, sameText } from './stale-edits';

type ProjectPage = PageContext & { project: NonNullable<PageContext['project']> };

/** How many empty knowledge slots the form offers. */
const SPARE_KNOWLEDGE = 2;

const lines = (text: string) =>
  text
    .split(/[\n,]/)
    .map((s) => s.trim())
    .filter(Boolean);

/**
 * The device fields of the form, in the admin API's shape. `stored` is the device's styling as
 * saved (none for a new device): a colour input always submits a value, the page's default where
 * the device sets none, so a colour is kept only when the operator changed it or the device had one.
 * Storing the default would pin the device to it, and a device without one follows the page's.
 */
function parseDeviceForm(form: Form, stored: DeviceInput['styling'] = {}): DeviceInput & { name: string } {
  const styling: Record<string, string> = {};
  for (const k of ['title', 'logoUrl'] as const) {
    const v = form.get(`styling.${k}`).trim();
    if (v) styling[k] = v;
  }
  for (const k of ['primaryColor', 'backgroundColor'] as const) {
    const v = form.get(`styling.${k}`).trim();
    const untouched = stored?.[k] === undefined && v.toLowerCase() === LINK_PAGE_DEFAULT_COLORS[k];
    if (v && !untouched) styling[k] = v;
  }
  const titles = form.all('knowledge.title');
  const contents = form.all('knowledge.content');
  const knowledge = titles
    .map((title, i) => ({ title: title.trim(), content: (contents[i] ?? '').trim() }))
    .filter((k) => k.title || k.content);
  const languages = lines(form.get('languages'));
  const voiceName = form.get('voice.voiceName').trim();
  return {
    name: form.get('name').trim(),
    isActive: form.get('isActive') === 'on',
    ipAllowList: lines(form.get('ipAllowList')),
    languages,
    defaultLanguage: form.get('defaultLanguage').trim() || languages[0] || 'en',
    styling,
    voice: { enabled: form.get('voice.enabled') === 'on', ...(voiceName ? { voiceName } : {}) },
    persona: form.get('persona'),
    customInstructions: form.get('customInstructions'),
    knowledge,
  };
}

type DeviceValues = DeviceInput & { name: string };

/**
 * What the device form saves by itself: each field, bar a default language, which goes with the
 * languages it must be one of. Styling and voice are saved key by key, so one tab's colour and
 * another's title both stay.
 */
const DEVICE_FACETS = [
  'name',
  'isActive',
  'styling.title',
  'styling.primaryColor',
  'styling.backgroundColor',
  'styling.logoUrl',
  'languages',
  'voice.enabled',
  'voice.voiceName',
  'persona',
  'customInstructions',
  'knowledge',
  'ipAllowList',
] as const;
type DeviceFacet = (typeof DEVICE_FACETS)[number];

/** A colour as compared: lower case, the page's default the same as none (the form shows it for none). */
const colourOf = (v: string | undefined, k: 'primaryColor' | 'backgroundColor') => {
  const c = (v ?? '').trim().toLowerCase();
  return c === LINK_PAGE_DEFAULT_COLORS[k] ? '' : c;
};

/** A device's (or the form's) values by facet, as the form shows and sends them. */
function deviceFacets(v: DeviceValues): Record<DeviceFacet, unknown> {
  const s = v.styling ?? {};
  return {
    name: v.name.trim(),
    isActive: v.isActive !== false,
    'styling.title': sameText(s.title),
    'styling.primaryColor': colourOf(s.primaryColor, 'primaryColor'),
    'styling.backgroundColor': colourOf(s.backgroundColor, 'backgroundColor'),
    'styling.logoUrl': sameText(s.logoUrl),
    languages: [v.languages ?? [], v.defaultLanguage ?? ''],
    'voice.enabled': v.voice?.enabled === true,
    'voice.voiceName': sameText(v.voice?.voiceName),
    persona: sameText(v.persona),
    customInstructions: sameText(v.customInstructions),
    knowledge: (v.knowledge ?? []).map((k) => [sameText(k.title), sameText(k.content)]),
    ipAllowList: v.ipAllowList ?? [],
  };
}

/**
 * Copies the `changed` facets of `from` onto `target`; styling and voice key by key onto
 * `current`'s (what the device holds now), so that keys changed elsewhere stay.
 */
function applyFacets(target: DeviceInput, from: DeviceValues, changed: DeviceFacet[], current: DeviceValues) {
  const t = target as Record<string, unknown>;
  for (const f of changed) {
    const [group, key] = f.split('.') as [string, string | undefined];
    if (group === 'styling' || group === 'voice') {
      t[group] ??= { ...(current[group] ?? {}) };
      const into = t[group] as Record<string, unknown>;
      const value = (from[group] as Record<string, unknown> | undefined)?.[key as string];
      if (value === undefined) delete into[key as string];
      else into[key as string] = value;
    } else if (f === 'languages') {
      target.languages = from.languages;
      target.defaultLanguage = from.defaultLanguage;
    } else t[f] = (from as unknown as Record<string, unknown>)[f];
  }
  return target;
}

/** What the device holds now in one facet, in words. */
function holdsNow(f: DeviceFacet, d: Device): string {
  const colour = (k: 'primaryColor' | 'backgroundColor') =>
    d.styling?.[k] ? `is now ${d.styling[k]}` : 'is now the link page’s own';
  switch (f) {
    case 'name':
      return `the name is now ${quoted(d.name)}`;
    case 'isActive':
      return `the device is now ${d.isActive ? 'active' : 'inactive'}`;
    case 'styling.title':
      return `the page title is now ${quoted(d.styling?.title)}`;
    case 'styling.primaryColor':
      return `the primary colour ${colour('primaryColor')}`;
    case 'styling.backgroundColor':
      return `the background colour ${colour('backgroundColor')}`;
    case 'styling.logoUrl':
      return `the logo URL is now ${quoted(d.styling?.logoUrl)}`;
    case 'languages':
      return `the languages are now ${d.languages.join(', ') || 'none'}, the default ${d.defaultLanguage}`;
    case 'voice.enabled':
      return `voice is now ${d.voice?.enabled ? 'enabled' : 'disabled'}`;
    case 'voice.voiceName':
      return `the voice name is now ${quoted(d.voice?.voiceName)}`;
    case 'persona':
      return `the persona now reads ${quoted(d.persona)}`;
    case 'customInstructions':
      return `the custom instructions now read ${quoted(d.customInstructions)}`;
    case 'knowledge':
      return d.knowledge.length === 0
        ? 'it now holds no entries'
        : `it now holds ${d.knowledge.length} ${d.knowledge.length === 1 ? 'entry' : 'entries'}: ${d.knowledge.map((k) => quoted(k.title, 60)).join(', ')}`;
    case 'ipAllowList':
      return d.ipAllowList.length === 0
        ? 'the allow-list is now empty (every address allowed)'
        : `the allow-list now holds ${d.ipAllowList.join(', ')}`;
  }
}

/** The heading the link page shows for a device without a title: its default language's. */
function defaultTitle(v: DeviceInput): string {
  const lang = v.defaultLanguage || v.languages?.[0] || 'en';
  return LINK_PAGE_TITLES[linkPageTextLanguage(lang) ?? 'en'];
}

function deviceForm(
  pc: ProjectPage,
  action: string,
  v: DeviceInput & { name: string },
  errors: FieldErrors,
  submit: string,
  base?: Record<string, string>,
) {
  const knowledge = [
    ...(v.knowledge ?? []),
    ...Array.from({ length: SPARE_KNOWLEDGE }, () => ({ title: '', content: '' })),
  ];
  const s = v.styling ?? {};
  return withErrorSummary(
    errors,
    html`<form method="post" action="${action}" novalidate data-preview-form>
  ${csrfField(pc)}
  ${base ? baseFields(base) : ''}
  ${field({ name: 'name', label: 'Name', value: v.name, required: true, error: errors.name, attrs: html` maxlength="200"` })}
  ${errors.isActive ? html`<p class="error" id="f-isActive-err">${errors.isActive}</p>` : ''}
  <div class="check"><input type="checkbox" id="f-isActive" name="isActive"${v.isActive !== false ? html` checked` : ''}${errors.isActive ? html` aria-describedby="f-isActive-err" aria-invalid="true"` : ''}><label for="f-isActive">Active (an inactive device makes every link of its campaigns unavailable)</label></div>
  <fieldset><legend>Link page styling</legend>
    ${field({ name: 'styling.title', label: 'Page title', value: s.title, error: errors['styling.title'], attrs: html` data-preview="title"` })}
    ${field({ name: 'styling.primaryColor', label: 'Primary colour', type: 'color', value: s.primaryColor ?? LINK_PAGE_DEFAULT_COLORS.primaryColor, error: errors['styling.primaryColor'], attrs: html` data-preview="primaryColor"` })}
    ${field({ name: 'styling.backgroundColor', label: 'Background colour', type: 'color', value: s.backgroundColor ?? LINK_PAGE_DEFAULT_COLORS.backgroundColor, error: errors['styling.backgroundColor'], attrs: html` data-preview="backgroundColor"` })}
    ${field({ name: 'styling.logoUrl', label: 'Logo URL', type: 'url', value: s.logoUrl, hint: 'An https address. An http one is accepted, but the link page is served over https, where browsers fetch an http logo over https or not at all.', error: errors['styling.logoUrl'] })}
    <section aria-labelledby="preview-title" class="preview-wrap">
  <h2 id="preview-title">Link page preview</h2>
  <p class="meta">Updates as you edit the styling. The two messages are examples: the page opens empty, its texts in the customer's language.</p>
  <div class="preview" id="link-preview" aria-hidden="true" data-default-title="${defaultTitle(v)}">
    <div class="pv-head">${s.title?.trim() || defaultTitle(v)}</div>
    <div class="pv-body"><p class="pv-bubble pv-user">A customer's message</p><p class="pv-bubble">The assistant's reply</p></div>
    <div class="pv-input">Type a message…</div>
  </div>
</section>
  </fieldset>
  <fieldset><legend>Languages and voice</legend>
    ${field({ name: 'languages', label: 'Languages', value: (v.languages ?? []).join(', '), hint: `Language codes separated by commas, e.g. en, fr, de-CH. The link page has its own texts in ${LINK_PAGE_LANGUAGES.join(', ')}; for any other language a visitor gets them in the next language of this device they accept that has them, else in English.`, error: errors.languages })}
    ${field({ name: 'defaultLanguage', label: 'Default language', value: v.defaultLanguage, error: errors.defaultLanguage })}
    ${errors['voice.enabled'] ? html`<p class="error" id="f-voice-enabled-err">${errors['voice.enabled']}</p>` : ''}
    <div class="check"><input type="checkbox" id="f-voice-enabled" name="voice.enabled"${v.voice?.enabled ? html` checked` : ''}${errors['voice.enabled'] ? html` aria-describedby="f-voice-enabled-err" aria-invalid="true"` : ''}><label for="f-voice-enabled">Voice enabled</label></div>
    ${field({ name: 'voice.voiceName', label: 'Voice name', value: v.voice?.voiceName, error: errors['voice.voiceName'] })}
  </fieldset>
  <fieldset><legend>Assistant</legend>
    ${textarea({ name: 'persona', label: 'Persona', value: v.persona, hint: 'Who the assistant is and what it is for.', error: errors.persona, rows: 4 })}
    ${textarea({ name: 'customInstructions', label: 'Custom instructions', value: v.customInstructions, hint: 'Recipients in append mode add theirs after these; replace mode swaps them.', error: errors.customInstructions, rows: 4 })}
  </fieldset>
  <fieldset><legend>Knowledge entries</legend>
    ${errors.knowledge ? html`<p class="error" id="f-knowledge" tabindex="-1">${errors.knowledge}</p>` : ''}
    <p class="hint">Leave both boxes empty to remove an entry.</p>
    ${knowledge.map(
      (k, i) => html`<div class="card">
      ${field({ id: `knowledge.${i}.title`, name: 'knowledge.title', label: `Entry ${i + 1} title`, value: k.title, error: errors[`knowledge.${i}.title`] })}
      ${textarea({ id: `knowledge.${i}.content`, name: 'knowledge.content', label: `Entry ${i + 1} content`, value: k.content, error: errors[`knowledge.${i}.content`], rows: 3 })}
    </div>`,
    )}
  </fieldset>
  <fieldset><legend>Access</legend>
    ${textarea({ name: 'ipAllowList', label: 'IP allow-list', value: (v.ipAllowList ?? []).join('\n'), hint: 'One IPv4 or IPv6 CIDR block per line, e.g. 203.0.113.0/24. Empty allows every address.', error: errors.ipAllowList, rows: 3 })}
  </fieldset>
  <div class="actions"><button type="submit">${submit}</button><a class="button secondary" href="${projectPath(pc.project.id)}/devices">Cancel</a></div>
</form>
`,
  );
}

/** What keeps a device from being deleted: the campaigns that use it, linked; or that none does. */
function inUse(projectId: string, users: ReadonlyArray<{ id: string; name: string }>) {
  if (users.length === 0) return html`<p>No campaign uses this device, so it can be deleted.</p>`;
  const n = users.length === 1 ? 'one campaign' : `${users.length} campaigns`;
  return html`<p>This device is used by ${n}, so it cannot be deleted. A draft or upcoming campaign can be moved to another device in its edit form, and a draft can be deleted; a campaign that has gone live keeps its device.</p>
<ul>${users.map((c) => html`<li><a href="${projectPath(projectId)}/campaigns/${c.id}">${c.name}</a></li>`)}</ul>`;
}

/** Device list, create, edit (styling with live preview, languages, voice, persona, knowledge, access) and delete. */
export function registerDeviceRoutes(r: Router, deps: DashboardDeps): void {
  const d = deps.domain;
  const check = compileAdminSchemas();
  const base = (pid: string) => `${projectPath(pid)}/devices`;

  r.get('/p/:pid/devices', async (ctx) => {
    const pc = await projectContext(deps, ctx, 'devices');
    const devices = await listDevices(d, pc.project.id);
    sendPage(
      ctx,
      layout(
        pc,
        'Devices',
        html`${ctx.query.done === 'device-deleted' ? notice('ok', 'Device deleted.') : ''}
<h1>Devices</h1>
<p>A device is the channel a campaign renders through: its link page styling, languages, voice, persona and access rules.</p>
<div class="actions"><a class="button" href="${base(pc.project.id)}/new">New device</a></div>
${
  devices.length === 0
    ? html`<p>No devices yet.</p>`
    : html`<ul class="cards">${devices.map(
        (x) => html`<li class="card"><h2><a href="${base(pc.project.id)}/${x.id}">${x.name}</a></h2>
<p>${x.isActive ? html`<span class="badge on">active</span>` : html`<span class="badge off">inactive</span>`}</p>
<p class="meta">Languages: ${x.languages.join(', ')} · ${x.knowledge.length} knowledge entries · ${x.ipAllowList.length ? `${x.ipAllowList.length} allowed networks` : 'open to every address'}</p></li>`,
      )}</ul>`
}`,
      ),
    );
  });

  const formPage = async (
    ctx: Context,
    device: Device | null,
    values: DeviceInput & { name: string },
    errors: FieldErrors = {},
    saved = false,
    shown: Record<string, string> | undefined = device ? fingerprints(deviceFacets(device)) : undefined,
    stale = false,
  ) => {
    const pc = await projectContext(deps, ctx, 'devices');
    const title = device ? device.name : 'New device';
    const action = device ? `${base(pc.project.id)}/${device.id}` : base(pc.project.id);
    const users = device ? await campaignsUsing(d.pool, device.id) : [];
    sendPage(
      ctx,
      layout(
        pc,
        title,
        html`${breadcrumbs([
          ['Devices', base(pc.project.id)],
          [title, null],
        ])}
${saved ? notice('ok', 'Device saved. Links pick up the change within seconds.') : ''}
${stale ? notice('warn', 'This device was changed elsewhere after you opened this form; here is what it holds now. The fields you changed keep what you typed; nothing was saved yet.') : ''}
<h1>${device ? html`Device “${device.name}”` : 'New device'}</h1>
${device ? html`<p class="meta">Id <code>${device.id}</code></p>` : ''}
${deviceForm(pc, action, values, errors, device ? 'Save device' : 'Create device', shown)}
${device ? html`<h2>Delete device</h2>${inUse(pc.project.id, users)}${users.length === 0 ? html`<div class="actions"><a class="button danger" href="${action}/delete">Delete…</a></div>` : ''}` : ''}`,
      ),
      stale ? 409 : Object.keys(errors).length ? 400 : 200,
    );
  };

  // Every problem at once: the schema's and the device rules', which the domain checks again.
  const problemsOf = (schema: 'create-device' | 'patch-device', input: DeviceInput & { name: string }) => [
    ...check(schema, JSON.parse(JSON.stringify(input))),
    ...deviceRuleProblems({ ipAllowList: [], languages: [], defaultLanguage: '', ...input }),
  ];
  const domainProblems = (err: unknown) => {
    if (!(err instanceof AppError) || err.code !== 'invalid_request') throw err;
    return (err.details as { problems?: ValidationProblem[] }).problems ?? [];
  };

  r.get('/p/:pid/devices/new', (ctx) =>
    formPage(ctx, null, {
      name: '',
      isActive: true,
      languages: ['en'],
      defaultLanguage: 'en',
      knowledge: [],
    }),
  );
  r.post('/p/:pid/devices', async (ctx) => {
    const pc = await projectContext(deps, ctx, 'devices');
    const input = parseDeviceForm(formOf(ctx));
    const problems = problemsOf('create-device', input);
    if (problems.length) return formPage(ctx, null, input, deviceFieldErrors(problems, input));
    try {
      const device = await createDevice(actingAs(d, pc), pc.project.id, input);
      ctx.status = 303;
      ctx.redirect(`${base(pc.project.id)}/${device.id}?done=saved`);
    } catch (err) {
      return formPage(ctx, null, input, deviceFieldErrors(domainProblems(err), input));
    }
  });
  r.get('/p/:pid/devices/:did/delete', async (ctx) => {
    const pc = await projectContext(deps, ctx, 'devices');
    const device = await getDevice(d, pc.project.id, ctx.params.did);
    const users = await campaignsUsing(d.pool, device.id);
    const path = `${base(pc.project.id)}/${device.id}`;
    sendPage(
      ctx,
      layout(
        pc,
        `Delete ${device.name}`,
        html`${breadcrumbs([
          ['Devices', base(pc.project.id)],
          [device.name, path],
          ['Delete', null],
        ])}
<h1>Delete “${device.name}”?</h1>
${inUse(pc.project.id, users)}
${users.length === 0 ? html`<p>Its persona, instructions, knowledge, styling and allowed networks are erased, and no campaign can use it again. <strong>This cannot be undone.</strong></p>` : ''}
${confirmOrBack(pc, {
  action: users.length === 0 ? `${path}/delete` : null,
  button: 'Delete device',
  danger: true,
  hidden: onceField(),
  back: path,
  backLabel: 'Back to the device',
})}`,
      ),
    );
  });
  r.post('/p/:pid/devices/:did/delete', async (ctx) => {
    const pc = await projectContext(deps, ctx, 'devices');
    // Once per form: sent again, it is answered with the list the first one led to, not a 404.
    await actOnce(d, ctx, async () => {
      await deleteDevice(actingAs(d, pc), pc.project.id, ctx.params.did);
      return `${base(pc.project.id)}?done=device-deleted`;
    });
  });
  r.get('/p/:pid/devices/:did', async (ctx) => {
    const pc = await projectContext(deps, ctx, 'devices');
    const device = await getDevice(d, pc.project.id, ctx.params.did);
    return formPage(ctx, device, device, {}, ctx.query.done === 'saved');
  });
  // Saves only what the operator changed from what the form showed (its fingerprints), so a form
  // opened before another tab's save never undoes it; a field changed in both is not saved over:
  // the form comes back with what the device holds now, what the operator typed kept.
  r.post('/p/:pid/devices/:did', async (ctx) => {
    const pc = await projectContext(deps, ctx, 'devices');
    const form = formOf(ctx);
    // A second round only when another save came between this one's read and its write.
    for (let round = 0; ; round++) {
      const device = await getDevice(d, pc.project.id, ctx.params.did);
      const input = parseDeviceForm(form, device.styling);
      const current = deviceFacets(device);
      const shown = baseFrom(form, current);
      const problems = problemsOf('patch-device', input);
      if (problems.length)
        return formPage(ctx, device, input, deviceFieldErrors(problems, input), false, shown);
      const { changed, conflicts } = compareWithBase(form, deviceFacets(input), current);
      if (conflicts.length) {
        const merged = applyFacets(structuredClone(device) as DeviceValues, input, changed, device);
        const errors = Object.fromEntries(
          conflicts.map((f) => [
            f,
            `Changed elsewhere after you opened this form: ${holdsNow(f, device)}. What you typed is kept here: save again to replace it.`,
          ]),
        );
        return formPage(ctx, device, merged as DeviceValues, errors, false, fingerprints(current), true);
      }
      try {
        if (changed.length > 0) {
          const patch = applyFacets({}, input, changed, device);
          await updateDevice(actingAs(d, pc), pc.project.id, device.id, patch, {
            expectedVersion: device.version,
          });
        }
        ctx.status = 303;
        return ctx.redirect(`${base(pc.project.id)}/${device.id}?done=saved`);
      } catch (err) {
        if (
          err instanceof AppError &&
          err.code === 'conflict' &&
          (err.details as { reason?: string }).reason === 'version_changed' &&
          round === 0
        )
          continue;
        return formPage(ctx, device, input, deviceFieldErrors(domainProblems(err), input), false, shown);
      }
    }
  });
}
