// The paste box runs real mask code: a factory-style mask_mod with a module-level lookup tensor
// imports; a refused text is shown in place (the line, a caret under the column, why) with its
// place selected in the text, and changes nothing; b and h pick the batch and head a per-head
// mask is read at; the reader is a second wasm module, fetched on first use only (a failed fetch
// is one line and changes nothing; the next paste fetches it again). Screenshots of a refusal at 1440x900 in both themes go to target/e2e-artifacts/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { ART, holdModule, loadPreset, messageText, moduleFetches, openFresh, servedApp, shot, stat, waitStat } from './support.mjs';

const app = servedApp();

/** Opens the paste box and imports `text` at `n` (and `b`, `h` when given). */
async function pasteImport(page, text, n, { b, h, landed = true } = {}) {
  await page.locator('#paste-import').evaluate((d) => {
    d.open = true;
  });
  await page.fill('#paste-text', text);
  for (const [id, v] of [['#paste-n', n], ['#paste-b', b], ['#paste-h', h]]) {
    if (v === undefined) continue;
    await page.fill(id, String(v));
    await page.locator(id).dispatchEvent('change');
  }
  await page.click('#paste-import-button');
  // The import has landed (or been refused) once the Files panel is no longer busy: an import
  // waits for the lazily loaded reader, and the page's n alone cannot tell a landed import from
  // the state before it when both are at the same n.
  if (landed) await page.waitForSelector('.panel.files:not([aria-busy])');
}

/** The mask's rows, from the exported mask file (Export > Mask JSON). */
async function rows(page) {
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.locator('#export-menu').evaluate((d) => {
      d.open = true;
    }).then(() => page.click('#export-json')),
  ]);
  const chunks = [];
  for await (const c of await download.createReadStream()) chunks.push(c);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')).rows;
}

const DOCUMENTS = [
  'import torch',
  '',
  '# Three packed documents; each token sees earlier tokens of its own document.',
  'lengths = torch.tensor([3, 2, 3])',
  'document_id = torch.repeat_interleave(torch.arange(len(lengths)), lengths)',
  '',
  'def causal(b, h, q_idx, kv_idx):',
  '    return q_idx >= kv_idx',
  '',
  'def generate_doc_mask_mod(mask_mod, document_id):',
  '    def doc_mask_mod(b, h, q_idx, kv_idx):',
  '        same_doc = document_id[q_idx] == document_id[kv_idx]',
  '        return same_doc & mask_mod(b, h, q_idx, kv_idx)',
  '    return doc_mask_mod',
  '',
  'mask_mod = generate_doc_mask_mod(causal, document_id)',
  '',
].join('\n');

test('a factory-style mask_mod with a module-level lookup tensor imports with the right cells', async () => {
  const page = await openFresh(app.context, app.server.base);
  await loadPreset(page, 'causal', 6);
  await pasteImport(page, DOCUMENTS, 8);
  await waitStat(page, 'n', 8);
  assert.match(await page.locator('#message').innerText(), /imported mask_mod `\w+` from the pasted text at n = 8/);
  assert.equal(await stat(page, 'entries'), '15');
  assert.deepEqual(await rows(page), [
    '1.......',
    '11......',
    '111.....',
    '...1....',
    '...11...',
    '.....1..',
    '.....11.',
    '.....111',
  ]);
  assert.equal(await stat(page, 'classes'), '8');
  assert.equal(await page.locator('#paste-refusal').count(), 0);
  assert.deepEqual(page.errors, []);
  await page.close();
});

/** A text refused on its 34th line, far below the box's seven visible lines. */
function refusedText() {
  const lines = ['import torch', 'MASK = None'];
  for (let i = 0; i < 30; i++) lines.push(`# filler comment ${i}`);
  lines.push('def mask_mod(b, h, q_idx, kv_idx):', '    return MASK[q_idx, kv_idx]', '');
  return lines.join('\n');
}

test('a refused text is shown in place: its line, a caret under the column, the place selected; nothing changes', async () => {
  const page = await openFresh(app.context, app.server.base);
  await page.setViewportSize({ width: 1440, height: 900 });
  await loadPreset(page, 'causal', 6);
  const before = await rows(page);
  const text = refusedText();
  await pasteImport(page, text, 8);
  const box = page.locator('#paste-refusal');
  await box.waitFor();
  assert.equal(await box.getAttribute('role'), 'alert');
  assert.match(await box.locator('.refusal-where').innerText(), /^Refused at line 34, column 16:$/);
  // The line as pasted (dedented), and the caret under the subscript.
  const [line, caret] = (await box.locator('pre').innerText()).split('\n');
  assert.equal(line, 'return MASK[q_idx, kv_idx]');
  assert.equal(caret, '           ^');
  assert.equal(line[caret.indexOf('^')], '[');
  assert.match(await box.locator('.refusal-what').innerText(), /not subscriptable/);
  assert.match(await page.locator('#message').innerText(), /line 34, column 16: .*Nothing was changed/);
  // The text's selection is the refused character, focused and scrolled into view.
  const sel = await page.locator('#paste-text').evaluate((t) => ({
    start: t.selectionStart,
    end: t.selectionEnd,
    focused: document.activeElement === t,
    scrolled: t.scrollTop,
    invalid: t.getAttribute('aria-invalid'),
    described: t.getAttribute('aria-describedby'),
  }));
  const at = text.indexOf('[q_idx');
  assert.deepEqual(
    { ...sel, scrolled: sel.scrolled > 0 },
    { start: at, end: at + 1, focused: true, scrolled: true, invalid: 'true', described: 'paste-refusal' },
  );
  // Both themes, the refused place still selected (the text is focused again after the theme button).
  for (const theme of ['light', 'dark']) {
    if ((await page.evaluate(() => document.documentElement.dataset.theme)) !== theme) {
      await page.click('#theme');
      await page.locator('#paste-text').focus();
    }
    await page.waitForFunction((t) => document.documentElement.dataset.theme === t, theme);
    await shot(page, `paste-refusal-${theme}`);
    await page.locator('.panel.files').screenshot({ path: path.join(ART, `paste-refusal-box-${theme}.png`) });
  }
  assert.deepEqual(await rows(page), before);
  // A fixed text imports and clears the refusal.
  await pasteImport(page, text.replace('MASK = None', 'MASK = torch.tril(torch.ones(8, 8, dtype=torch.bool))'), 8);
  await waitStat(page, 'n', 8);
  assert.equal(await box.count(), 0);
  assert.deepEqual(await rows(page), ['1.......', '11......', '111.....', '1111....', '11111...', '111111..', '1111111.', '11111111']);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('b and h pick the head a per-head mask is read at, and the message says it reads h', async () => {
  const page = await openFresh(app.context, app.server.base);
  const text = [
    'import torch',
    'WINDOWS = torch.tensor([1, 2, 4, 8])  # one sliding window per head',
    '',
    'def per_head_window(b, h, q_idx, kv_idx):',
    '    return (kv_idx <= q_idx) & (q_idx - kv_idx < WINDOWS[h])',
    '',
  ].join('\n');
  await pasteImport(page, text, 8);
  await waitStat(page, 'n', 8);
  assert.equal(await stat(page, 'entries'), '8');
  assert.match(await page.locator('#message').innerText(), /reads h: shown at h = 0; other heads give other masks/);
  await pasteImport(page, text, 8, { h: 2 });
  await waitStat(page, 'entries', 8 + 7 + 6 + 5);
  assert.match(await page.locator('#message').innerText(), /reads h: shown at h = 2; other heads give other masks/);
  assert.deepEqual((await rows(page)).slice(4), ['.1111...', '..1111..', '...1111.', '....1111']);
  // A head past the table is refused at a cell, as torch's create_mask would raise; nothing changes.
  await pasteImport(page, text, 8, { h: 4 });
  await page.waitForFunction(() => document.querySelector('#message.error')?.textContent.includes('Nothing was changed'));
  assert.equal(await stat(page, 'entries'), String(8 + 7 + 6 + 5));
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('the mask_mod reader is fetched on first use, once; a failed fetch is one line, changes nothing, and the next paste loads it', async () => {
  const page = await openFresh(app.context, app.server.base);
  const lazy = moduleFetches(page, 'hasseflow-lazy');
  await loadPreset(page, 'causal', 6);
  assert.deepEqual(lazy, [], 'the page and the editor fetch no reader');
  // The module's wasm is held, then refused: the loading state shows, then the failure.
  const module = await holdModule(page, 'hasseflow-lazy');
  await pasteImport(page, DOCUMENTS, 8, { landed: false });
  await page.waitForFunction(() => document.querySelector('#message')?.textContent.includes('loading the mask_mod reader'));
  assert.equal(await page.locator('.panel.files').getAttribute('aria-busy'), 'true');
  module.release();
  await page.waitForFunction(() => document.querySelector('#message.error')?.textContent.includes('the mask_mod reader did not load'));
  const failed = await messageText(page);
  assert.match(failed, /Nothing was changed/);
  assert.equal(failed.includes('\n'), false, failed);
  assert.equal(await stat(page, 'n'), '6');
  await module.restore();
  // The next paste loads it and imports; a third fetches nothing more.
  await pasteImport(page, DOCUMENTS, 8);
  await waitStat(page, 'n', 8);
  assert.match(await page.locator('#message').innerText(), /imported mask_mod `\w+` from the pasted text at n = 8/);
  const fetched = lazy.length;
  assert.ok(lazy.some((f) => /_bg\.wasm$/.test(f)) && lazy.some((f) => /\.js$/.test(f)), lazy.join(', '));
  await pasteImport(page, 'def m(b, h, q, k):\n    return k == q\n', 5);
  await waitStat(page, 'n', 5);
  assert.equal(lazy.length, fetched, `fetched again: ${lazy.join(', ')}`);
  assert.deepEqual(page.errors, []);
  await page.close();
});
