/**
 * The CSV import's parser, part of the dashboard script (and loaded alone by its tests): the rows
 * of a CSV text, each as its cells and the file line it starts on (1 the first), blank rows left
 * out. A cell in quotes may hold the delimiter, doubled quotes and line breaks; lines end in LF,
 * CRLF or CR, and every one counts, inside a quoted cell or on a blank row too, so a row's line
 * is the one a text editor shows it on.
 */
export const CSV_PARSER_JS = String.raw`function parseCsv(text) {
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    var firstLine = text.split(/\r?\n/, 1)[0] || '';
    var delim = (firstLine.split(';').length > firstLine.split(',').length) ? ';' : ',';
    var rows = [], row = [], cell = '', i = 0, q = false, line = 1, rowLine = 1;
    var endsLine = function (c) { return c === '\n' || (c === '\r' && text[i + 1] !== '\n'); };
    while (i < text.length) {
      var c = text[i];
      if (q) {
        if (c === '"') { if (text[i + 1] === '"') { cell += '"'; i += 2; continue; } q = false; i++; continue; }
        if (endsLine(c)) line++;
        cell += c; i++; continue;
      }
      if (c === '"' && cell === '') { q = true; i++; continue; }
      if (c === delim) { row.push(cell); cell = ''; i++; continue; }
      if (c === '\r' || c === '\n') {
        row.push(cell); cell = ''; rows.push({ cells: row, line: rowLine }); row = [];
        if (c === '\r' && text[i + 1] === '\n') i++;
        i++; line++; rowLine = line; continue;
      }
      cell += c; i++;
    }
    if (cell !== '' || row.length) { row.push(cell); rows.push({ cells: row, line: rowLine }); }
    return rows.filter(function (r) { return r.cells.some(function (v) { return v.trim() !== ''; }); });
  }`;

/**
 * The dashboard's one script, served from /dashboard/assets/app.js (the CSP allows no inline
 * script). Everything works without it except the CSV import; it adds the browser's time zone,
 * live timings and state badges, copy buttons, the link-page preview and the batched CSV import.
 */
export const APP_JS = String.raw`(function () {
  'use strict';
  var $ = function (sel, root) { return (root || document).querySelector(sel); };
  var $$ = function (sel, root) { return Array.prototype.slice.call((root || document).querySelectorAll(sel)); };

  function duration(s) {
    s = Math.max(0, Math.floor(s));
    var d = Math.floor(s / 86400), h = Math.floor((s % 86400) / 3600), m = Math.floor((s % 3600) / 60);
    if (d > 0) return d + 'd ' + h + 'h';
    if (h > 0) return h + 'h ' + m + 'm';
    if (m > 0) return m + 'm ' + (s % 60) + 's';
    return s + 's';
  }

  // An instant as a datetime-local value on the wall clock of a time zone.
  function localIn(at, tz) {
    var p = {};
    new Intl.DateTimeFormat('en-CA', { timeZone: tz, hourCycle: 'h23', year: 'numeric', month: '2-digit',
      day: '2-digit', hour: '2-digit', minute: '2-digit' }).formatToParts(at).forEach(function (x) { p[x.type] = x.value; });
    return p.year + '-' + p.month + '-' + p.day + 'T' + p.hour + ':' + p.minute;
  }

  // Time-zone selects default to the browser's zone unless the operator already chose one. The
  // form's default times were written in the server's zone: they are rewritten to show the same
  // instants in the browser's, or saving would read them in a zone they were not written in.
  $$('select[data-tz-auto="1"]').forEach(function (sel) {
    try {
      var tz = Intl.DateTimeFormat().resolvedOptions().timeZone;
      if (!tz || tz === sel.value || !$$('option', sel).some(function (o) { return o.value === tz; })) return;
      $$('input[data-instant]', sel.form).forEach(function (i) { i.value = localIn(new Date(i.getAttribute('data-instant')), tz); });
      sel.value = tz;
    } catch (e) { /* keep the server's default */ }
  });

  // The state badge beside a live timing follows its phase (the halted tag never changes), or the
  // page would read "upcoming · Running for 7s". The page's actions are still the rendered phase's,
  // so once the phase differs from it (data-state) a note says to reload. Its live region is there
  // from the start, empty: a region added together with its text is not reliably announced.
  function showPhase(el, phase) {
    var line = el.parentNode;
    var badge = $('.badge[class*="state-"]:not(.state-halted)', line);
    if (badge && badge.textContent !== phase) { badge.textContent = phase; badge.className = 'badge state-' + phase; }
    var rendered = el.getAttribute('data-state');
    if (!rendered) return;
    if (!el.phaseNote) {
      el.phaseNote = document.createElement('div');
      el.phaseNote.setAttribute('role', 'status');
      line.parentNode.insertBefore(el.phaseNote, line.nextSibling);
    }
    if (rendered !== phase && el.phaseNote.getAttribute('data-phase') !== phase) {
      el.phaseNote.setAttribute('data-phase', phase);
      el.phaseNote.className = 'notice warn';
      el.phaseNote.textContent = 'The campaign is now ' + phase + ': reload to see what you can do.';
    }
  }

  // Live timing: starts in / running for / ended ago, recomputed every second.
  function tick() {
    var now = Date.now();
    $$('[data-timing]').forEach(function (el) {
      var launched = Date.parse(el.getAttribute('data-launched') || '');
      if (isNaN(launched)) { el.textContent = 'Not launched'; return; }
      var start = Date.parse(el.getAttribute('data-start'));
      var end = Date.parse(el.getAttribute('data-end'));
      // The end first: a campaign halted before its start ended at the halt.
      if (now >= end) { el.textContent = 'Ended ' + duration((now - end) / 1000) + ' ago'; showPhase(el, 'completed'); }
      else if (now < start) { el.textContent = 'Starts in ' + duration((start - now) / 1000); showPhase(el, 'upcoming'); }
      // Running since it went live: its start, or its launch when that came later.
      else { el.textContent = 'Running for ' + duration((now - Math.max(start, launched)) / 1000); showPhase(el, 'active'); }
    });
  }
  if ($('[data-timing]')) { tick(); setInterval(tick, 1000); }

  // Copy buttons.
  $$('button[data-copy]').forEach(function (btn) {
    btn.hidden = false;
    btn.addEventListener('click', function () {
      var target = document.getElementById(btn.getAttribute('data-copy'));
      var text = target ? target.textContent.trim() : '';
      var done = function () {
        var note = document.getElementById(btn.getAttribute('data-copy') + '-copied');
        if (note) note.textContent = 'Copied to the clipboard.';
      };
      if (navigator.clipboard && navigator.clipboard.writeText) navigator.clipboard.writeText(text).then(done, function () {});
      else {
        var range = document.createRange(); range.selectNodeContents(target);
        var s = window.getSelection(); s.removeAllRanges(); s.addRange(range);
        try { document.execCommand('copy'); done(); } catch (e) { /* selected for manual copy */ }
      }
    });
  });

  // Confirmations on destructive buttons.
  $$('form[data-confirm]').forEach(function (form) {
    form.addEventListener('submit', function (ev) {
      if (!window.confirm(form.getAttribute('data-confirm'))) ev.preventDefault();
    });
  });

  // One submission per form: a second click while the first is on its way (a double click, a
  // slow server) would add a top-off or create a key twice. A posted form, once sent, ignores
  // further submits until the page is left. Its buttons are marked busy (aria-disabled and a
  // visible state), not disabled: a disabled button's name and value would leave the submission.
  // The check runs first (capture), so a busy form asks no confirmation again; the marking runs
  // last (bubble), after a confirmation, and not when it was declined.
  var isPost = function (f) { return f && f.tagName === 'FORM' && (f.getAttribute('method') || '').toLowerCase() === 'post'; };
  var submitButtons = function (form) {
    return $$('button:not([type]), button[type="submit"], input[type="submit"]', form);
  };
  document.addEventListener('submit', function (ev) {
    if (isPost(ev.target) && ev.target.hasAttribute('data-busy')) { ev.preventDefault(); ev.stopImmediatePropagation(); }
  }, true);
  document.addEventListener('submit', function (ev) {
    var form = ev.target;
    if (!isPost(form) || ev.defaultPrevented) return;
    form.setAttribute('data-busy', '');
    form.setAttribute('aria-busy', 'true');
    submitButtons(form).forEach(function (b) { b.setAttribute('aria-disabled', 'true'); });
  });
  // A page shown again from the back/forward cache was left: its forms can be sent again.
  window.addEventListener('pageshow', function (ev) {
    if (!ev.persisted) return;
    $$('form[data-busy]').forEach(function (form) {
      form.removeAttribute('data-busy');
      form.removeAttribute('aria-busy');
      submitButtons(form).forEach(function (b) { b.removeAttribute('aria-disabled'); });
    });
  });

  // WCAG relative luminance of a #rrggbb colour, and the contrast of two luminances.
  function lum(h) {
    var c = [1, 3, 5].map(function (i) {
      var v = parseInt(h.slice(i, i + 2), 16) / 255;
      return v <= 0.04045 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
    });
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
  }
  function contrast(a, b) { return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05); }

  // The text colour the link page puts on a #rrggbb primary colour: white, or near-black where
  // white is the weaker contrast (onColor in the link runtime's render.ts; a test holds them equal).
  function onColor(hex) {
    var l = lum(hex);
    return contrast(l, lum('#1d1d1f')) > contrast(l, 1) ? '#1d1d1f' : '#fff';
  }

  // The primary colour as the link page paints it under that text: the operator's where the text
  // reads on it at 4.5:1, else the least darker (under white) or lighter (under near-black) shade
  // that does (primaryUnderText in render.ts; a test holds them equal).
  function underText(hex) {
    var rgb = [1, 3, 5].map(function (i) { return parseInt(hex.slice(i, i + 2), 16); });
    var light = onColor(hex) === '#fff', text = light ? 1 : lum('#1d1d1f');
    for (var step = 0; step <= 255; step++) {
      var shade = step === 0 ? hex : '#' + rgb.map(function (c) {
        var v = Math.round(light ? c * (1 - step / 255) : c + (255 - c) * (step / 255));
        return (v < 16 ? '0' : '') + v.toString(16);
      }).join('');
      if (contrast(lum(shade), text) >= 4.5) return shade;
    }
    return light ? '#000000' : '#ffffff';
  }

  // Live preview of the link page from the device styling fields.
  var preview = $('#link-preview');
  if (preview) {
    var apply = function () {
      var get = function (n) { var i = $('[data-preview="' + n + '"]'); return i ? i.value : ''; };
      var head = $('.pv-head', preview), body = $('.pv-body', preview), user = $('.pv-user', preview);
      // As the link page: the device's title, else the page's own title in the default language.
      head.textContent = get('title').trim() || preview.getAttribute('data-default-title') || '';
      if (/^#[0-9a-fA-F]{6}$/.test(get('primaryColor'))) {
        head.style.background = user.style.background = underText(get('primaryColor'));
        head.style.color = user.style.color = onColor(get('primaryColor'));
      }
      if (/^#[0-9a-fA-F]{6}$/.test(get('backgroundColor'))) body.style.background = get('backgroundColor');
    };
    $$('[data-preview]').forEach(function (i) { i.addEventListener('input', apply); i.addEventListener('change', apply); });
    apply();
  }

  // Focus the error summary so that screen readers announce it.
  var summary = $('#error-summary');
  if (summary) summary.focus();

  // ---- CSV import -------------------------------------------------------------------------
  var importer = $('#importer');
  if (!importer) return;
  importer.hidden = false;
  var noscript = $('#importer-noscript'); if (noscript) noscript.hidden = true;
  var endpoint = importer.getAttribute('data-endpoint');
  var csrf = importer.getAttribute('data-csrf');
  var BATCH = 200;
  var FIELDS = [['', 'Ignore'], ['externalId', 'externalId'], ['label', 'label'], ['metadata', 'metadata.<column>'],
    ['isActive', 'isActive'], ['maxTotalInteractions', 'maxTotalInteractions'],
    ['maxInteractionsPerWindow', 'maxInteractionsPerWindow'], ['windowSeconds', 'windowSeconds'],
    ['injectionMode', 'injectionMode'], ['injectionInstructions', 'injectionInstructions'],
    ['disabledMessage', 'disabledMessage'], ['cooldownMessage', 'cooldownMessage']];
  var INTS = { maxTotalInteractions: 1, maxInteractionsPerWindow: 1, windowSeconds: 1 };
  var parsed = null;

  ${CSV_PARSER_JS}

  function guess(header) {
    var h = header.trim().toLowerCase().replace(/[\s_-]/g, '');
    var direct = { externalid: 'externalId', email: 'externalId', id: 'externalId', label: 'label', name: 'label',
      isactive: 'isActive', active: 'isActive', maxtotalinteractions: 'maxTotalInteractions',
      maxinteractionsperwindow: 'maxInteractionsPerWindow', windowseconds: 'windowSeconds',
      injectionmode: 'injectionMode', mode: 'injectionMode', injectioninstructions: 'injectionInstructions',
      instructions: 'injectionInstructions', disabledmessage: 'disabledMessage', cooldownmessage: 'cooldownMessage' };
    if (direct[h]) return direct[h];
    if (/^metadata\./i.test(header.trim())) return 'metadata';
    return 'metadata';
  }

  function metaKey(header) {
    return header.trim().replace(/^metadata\./i, '').replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64) || 'column';
  }

  var fileInput = $('#csv-file'), mapping = $('#mapping'), startBtn = $('#import-start');
  var progress = $('#import-progress'), status = $('#import-status'), report = $('#import-report');
  var reportBody = $('#import-report tbody'), summaryOut = $('#import-summary');

  fileInput.addEventListener('change', function () {
    var file = fileInput.files && fileInput.files[0];
    if (!file) return;
    var reader = new FileReader();
    reader.onload = function () {
      var rows = parseCsv(String(reader.result));
      if (rows.length < 2) {
        parsed = null; startBtn.disabled = true; mapping.hidden = true;
        status.textContent = 'The file needs a header row and at least one data row.'; return;
      }
      parsed = { header: rows[0].cells, rows: rows.slice(1) };
      mapping.innerHTML = '';
      var legend = document.createElement('legend'); legend.textContent = 'Map the columns of ' + file.name;
      mapping.appendChild(legend);
      parsed.header.forEach(function (h, idx) {
        var wrap = document.createElement('div'); wrap.className = 'field';
        var label = document.createElement('label'); label.setAttribute('for', 'map-' + idx);
        label.textContent = 'Column "' + h + '"';
        var sel = document.createElement('select'); sel.id = 'map-' + idx; sel.setAttribute('data-col', String(idx));
        FIELDS.forEach(function (f) {
          var o = document.createElement('option'); o.value = f[0];
          o.textContent = f[0] === 'metadata' ? 'metadata.' + metaKey(h) : f[1]; sel.appendChild(o);
        });
        sel.value = guess(h);
        wrap.appendChild(label); wrap.appendChild(sel); mapping.appendChild(wrap);
      });
      mapping.hidden = false;
      startBtn.disabled = false;
      status.textContent = parsed.rows.length + ' rows ready to import.';
    };
    reader.readAsText(file);
  });

  function toItem(row, map) {
    var item = {};
    map.forEach(function (m) {
      var v = (row[m.col] || '').trim();
      if (!m.field || v === '') return;
      if (m.field === 'metadata') { item.metadata = item.metadata || {}; item.metadata[metaKey(parsed.header[m.col])] = v; }
      else if (INTS[m.field]) item[m.field] = /^\d+$/.test(v) ? Number(v) : v;
      else if (m.field === 'isActive') item.isActive = /^(true|yes|1|y)$/i.test(v) ? true : /^(false|no|0|n)$/i.test(v) ? false : v;
      else item[m.field] = v;
    });
    return item;
  }

  function addRow(line, externalId, state, detail) {
    var tr = document.createElement('tr');
    [String(line), externalId || '', state, detail || ''].forEach(function (t, i) {
      var td = document.createElement('td'); td.textContent = t; if (i === 2) td.className = 'st-' + state; tr.appendChild(td);
    });
    reportBody.appendChild(tr);
  }

  startBtn.addEventListener('click', function () {
    if (!parsed) return;
    var map = $$('select[data-col]', mapping).map(function (s) { return { col: Number(s.getAttribute('data-col')), field: s.value }; });
    var rows = parsed.rows;
    var items = rows.map(function (r) { return toItem(r.cells, map); });
    var total = items.length, done = 0, counts = { created: 0, duplicate: 0, error: 0 };
    startBtn.disabled = true; fileInput.disabled = true;
    progress.max = total; progress.value = 0; progress.hidden = false; report.hidden = false; reportBody.innerHTML = '';
    var batch = 0;
    function finish(message) {
      status.textContent = message;
      summaryOut.textContent = counts.created + ' created, ' + counts.duplicate + ' duplicate, ' + counts.error + ' failed.';
      // Ready to run again, this file or another: choosing the same file again must fire a change.
      startBtn.disabled = false; fileInput.disabled = false; fileInput.value = '';
    }
    function next() {
      var start = batch * BATCH;
      if (start >= total) { finish('Import finished: ' + total + ' rows processed.'); return; }
      var chunk = items.slice(start, start + BATCH);
      batch++;
      status.textContent = 'Importing rows ' + (start + 1) + '–' + (start + chunk.length) + ' of ' + total + '…';
      fetch(endpoint, { method: 'POST', credentials: 'same-origin',
        headers: { 'content-type': 'application/json', 'x-csrf-token': csrf, accept: 'application/json' },
        body: JSON.stringify({ items: chunk }) })
        .then(function (res) { return res.json().then(function (body) { return { status: res.status, body: body }; }); })
        .then(function (r) {
          if (r.status === 201 || r.status === 422) {
            r.body.results.forEach(function (res) {
              counts[res.status] = (counts[res.status] || 0) + 1;
              addRow(rows[start + res.index].line, res.externalId, res.status, res.status === 'error' ? res.error : res.id);
            });
            done += chunk.length; progress.value = done;
            status.textContent = 'Imported ' + done + ' of ' + total + ' rows.';
            next();
          } else {
            chunk.forEach(function (it, i) { counts.error++; addRow(rows[start + i].line, it.externalId, 'error', r.body.error || ('HTTP ' + r.status)); });
            done += chunk.length; progress.value = done;
            if (r.status === 409 || r.status === 401 || r.status === 403 || r.status === 404) finish('Import stopped: ' + (r.body.error || r.status));
            else next();
          }
        })
        .catch(function () { finish('Import stopped: the dashboard could not be reached. Rows before this batch were imported.'); });
    }
    next();
  });
})();
`;
