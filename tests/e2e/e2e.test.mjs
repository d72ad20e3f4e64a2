// End-to-end tests of the trunk-built app (dist/) in headless Chromium via playwright-core.
// Serves dist/ with python3's http.server on 127.0.0.1 (stopped by PID), never sleeps: every
// step waits for a DOM condition. Screenshots and measurements go to target/e2e-artifacts/.
// The Flow view's tests, with and without WebGPU, are in flow.test.mjs; support.mjs is shared.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  ART,
  CLI,
  FIX,
  ROOT,
  cellCentre,
  holdModule,
  launch,
  loadPreset,
  messageText,
  moduleFetches,
  openFresh,
  paintCausal,
  setSize,
  shot,
  startServer,
  stat,
  waitStat,
} from './support.mjs';

let server;
let context;
let base;
const measurements = {};

before(async () => {
  server = await startServer();
  base = server.base;
  context = await launch();
});

after(async () => {
  writeFileSync(path.join(ART, 'measurements.json'), JSON.stringify(measurements, null, 2) + '\n');
  if (context) await context.closeAll();
  if (server) server.stop();
});

async function fresh(query = '') {
  return openFresh(context, base + query);
}

/** Opens the Export menu and clicks one of its items. */
async function clickExport(page, id) {
  await page.locator('#export-menu').evaluate((d) => {
    d.open = true;
  });
  await page.click(id);
}

async function exportJson(page) {
  const [download] = await Promise.all([page.waitForEvent('download'), clickExport(page, '#export-json')]);
  const file = path.join(ART, `download-${Date.now()}.json`);
  await download.saveAs(file);
  return readFileSync(file, 'utf8');
}

test('paint a 4x4 causal mask and see L* = 1', async () => {
  const page = await fresh();
  await setSize(page, 4);
  await paintCausal(page, 4);
  await waitStat(page, 'entries', 10);
  assert.equal(await stat(page, 'depth'), '1');
  assert.equal(await stat(page, 'dense'), 'yes');
  assert.equal(await stat(page, 'edges'), '3');
  assert.equal(await stat(page, 'classes'), '4');
  await page.locator('#layer').fill('1');
  await page.waitForFunction(() => document.querySelector('#convergence').textContent === 'converged at L* = 1');
  assert.deepEqual(JSON.parse(await exportJson(page)).rows, ['1...', '11..', '111.', '1111']);
  // Hover a cell: words and the path in the diagram.
  const c = await cellCentre(page, 3, 1);
  await page.mouse.move(c.x, c.y);
  await page.waitForFunction(() => document.querySelector('#hover').textContent.startsWith('position 3 attends to position 1'));
  assert.match(await page.locator('#hover').innerText(), /first reached at layer 1/);
  assert.equal(await page.locator('#hasse .node.lit').count(), 3);
  await shot(page, 'causal4-hover');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('two-finger pinch zooms the grid and cancels the first finger\'s stroke', async () => {
  const page = await fresh();
  await setSize(page, 16);
  const entries = await stat(page, 'entries');
  const cdp = await context.newCDPSession(page);
  await cdp.send('Emulation.setTouchEmulationEnabled', { enabled: true, maxTouchPoints: 5 });
  // Above the diagonal, where the grid is empty.
  const a = await cellCentre(page, 3, 9);
  const b = await cellCentre(page, 6, 12);
  const touch = (type, points) =>
    cdp.send('Input.dispatchTouchEvent', { type, touchPoints: points.map(([x, y], id) => ({ x, y, id })) });
  // One finger paints...
  await touch('touchStart', [[a.x, a.y]]);
  await waitStat(page, 'entries', Number(entries) + 1);
  // ...until a second finger comes down: the stroke is undone and the fingers zoom.
  await touch('touchStart', [
    [a.x, a.y],
    [b.x, b.y],
  ]);
  await waitStat(page, 'entries', entries);
  for (let i = 1; i <= 5; i++) {
    await touch('touchMove', [
      [a.x - 12 * i, a.y - 12 * i],
      [b.x + 12 * i, b.y + 12 * i],
    ]);
  }
  await page.waitForFunction(() => Number(document.querySelector('#grid').dataset.zoom) > 1.5);
  await touch('touchEnd', []);
  assert.equal(await stat(page, 'entries'), entries, 'the pinch painted nothing');
  // ...and left no undo step: one undo goes back past the resize.
  const zoom = Number(await page.locator('#grid').getAttribute('data-zoom'));
  measurements['pinch: zoom after spreading two fingers by 120 px'] = zoom;
  await page.click('text=fit');
  await page.waitForFunction(() => document.querySelector('#grid').dataset.zoom === '1.000');
  await page.click('#undo');
  await waitStat(page, 'n', 8);
  await page.close();
});

test('undo and redo with the keyboard', async () => {
  const page = await fresh();
  await setSize(page, 4);
  await paintCausal(page, 4);
  await waitStat(page, 'entries', 10);
  await page.locator('body').click({ position: { x: 5, y: 5 } });
  await page.keyboard.press('Control+z');
  await waitStat(page, 'entries', 6);
  await page.keyboard.press('Control+z');
  await waitStat(page, 'entries', 3);
  await page.keyboard.press('Control+Shift+z');
  await waitStat(page, 'entries', 6);
  await page.click('#op-transpose');
  await page.waitForFunction(() => document.querySelector('#redo').disabled);
  await page.keyboard.press('Control+z');
  await page.keyboard.press('Control+y');
  await waitStat(page, 'entries', 6);
  // Undo covers resizing too.
  await setSize(page, 6);
  await page.click('h1'); // leave the number field: text fields keep their own undo
  await page.keyboard.press('Control+z');
  await waitStat(page, 'n', 4);
  await page.close();
});

test('load a sliding window and step L until converged', async () => {
  const page = await fresh();
  await loadPreset(page, 'sliding-window', 16, { w: 4 });
  await waitStat(page, 'depth', 5);
  assert.equal(await stat(page, 'dense'), 'no');
  assert.equal(await page.locator('#layer-value').innerText(), '1');
  for (let l = 2; l <= 5; l++) {
    assert.match(await page.locator('#convergence').innerText(), /not converged yet/);
    await page.click('#layer-next');
    await page.waitForFunction((l) => document.querySelector('#layer-value').textContent === String(l), l);
  }
  assert.equal(await page.locator('#convergence').innerText(), 'converged at L* = 5');
  await shot(page, 'window16-converged');
  await page.click('#layer-next');
  await page.waitForFunction(() => document.querySelector('#layer-value').textContent === '6');
  await page.click('#layer-next'); // stays at L* + 1
  assert.equal(await page.locator('#layer-value').innerText(), '6');
  // Play from the start runs to the end on its own.
  await page.locator('#layer').fill('0');
  await page.waitForFunction(() => document.querySelector('#layer-value').textContent === '0');
  await page.click('#play');
  await page.waitForFunction(() => document.querySelector('#layer-value').textContent === '6', null, { timeout: 15000 });
  await page.waitForFunction(() => document.querySelector('#play').textContent.trim() === 'Play');
  await page.close();
});

test('presets: Block Two-Stream, Butterfly, prefix-LM, BigBird and the rest of the catalog', async () => {
  const page = await fresh();
  await loadPreset(page, 'block-two-stream', 6, { s: 2 });
  await waitStat(page, 'n', 12);
  assert.equal(await stat(page, 'classes'), '6');
  assert.equal(await stat(page, 'edges'), '4');
  assert.equal(await stat(page, 'depth'), '1');
  await shot(page, 'block-two-stream');
  await loadPreset(page, 'butterfly', 4);
  await waitStat(page, 'n', 12);
  assert.equal(await stat(page, 'classes'), '12');
  assert.equal(await stat(page, 'edges'), '12');
  assert.equal(await page.locator('#hasse .node').count(), 12);
  await shot(page, 'butterfly');
  await loadPreset(page, 'prefix-lm', 5, { p: 2 });
  await waitStat(page, 'classes', 4);
  assert.equal(await stat(page, 'edges'), '3');
  await loadPreset(page, 'bigbird', 32, { b: 4, random: 1, seed: 7 });
  await waitStat(page, 'n', 32);
  const options = await page.locator('#preset option').evaluateAll((os) => os.map((o) => o.value));
  assert.ok(options.length >= 20 && options.includes('block-two-stream') && options.includes('butterfly'), `the whole catalog is offered (${options.length})`);
  for (const name of options) {
    await loadPreset(page, name, 8);
  }
  // A bad parameter is refused with a message; the mask stays.
  const before = await stat(page, 'entries');
  await page.selectOption('#preset', 'sliding-window');
  await page.fill('#param-w', '0');
  await page.locator('#param-w').dispatchEvent('change');
  await page.click('#preset-load');
  await page.waitForSelector('#message.error');
  assert.equal(await stat(page, 'entries'), before);
  await page.close();
});

test('export JSON equals the expected file', async () => {
  const page = await fresh();
  await loadPreset(page, 'sliding-window', 4, { w: 2 });
  const text = await exportJson(page);
  assert.equal(text, readFileSync(path.join(FIX, 'window4.expected.json'), 'utf8'));
  await page.close();
});

test('import a file by the picker; labels stay text', async () => {
  const page = await fresh();
  await page.setInputFiles('#import', path.join(FIX, 'prefix5-labels.json'));
  await page.waitForFunction(() => document.querySelector('#message')?.textContent.includes('imported prefix5-labels.json'));
  await waitStat(page, 'n', 5);
  assert.equal(await stat(page, 'classes'), '4');
  assert.equal(await stat(page, 'edges'), '3');
  // The label with markup is shown as text in the diagram and the hover line, never parsed.
  const node = page.locator('#hasse .node', { hasText: '<img' });
  assert.equal(await node.count(), 1);
  assert.equal(await page.locator('img').count(), 0);
  const c = await cellCentre(page, 2, 0);
  await page.mouse.move(c.x, c.y);
  await page.waitForFunction(() => document.querySelector('#hover').textContent.includes('“<img src=x onerror=alert(1)>”'));
  // Hover a node: its members light up on the grid (drawn) and its down-set in the diagram.
  await page.locator('#hasse .node').nth(2).hover();
  await page.waitForFunction(() => document.querySelectorAll('#hasse .node.lit').length === 3);
  await page.waitForFunction(() => document.querySelector('#hover').textContent.startsWith('class 2 (position 3) sees 4 positions'));
  await shot(page, 'import-labels-node-hover');
  // SVG export escapes labels.
  const [download] = await Promise.all([page.waitForEvent('download'), clickExport(page, '#export-svg')]);
  const svg = readFileSync(await download.path(), 'utf8');
  assert.ok(svg.includes('&lt;img src=x onerror=alert(1)&gt;'));
  assert.ok(!svg.includes('<img'));
  const [png] = await Promise.all([page.waitForEvent('download'), clickExport(page, '#export-png')]);
  const bytes = readFileSync(await png.path());
  assert.equal(bytes.subarray(1, 4).toString(), 'PNG');
  await page.close();
});

test('import by drag and drop', async () => {
  const page = await fresh();
  const text = readFileSync(path.join(FIX, 'window4.expected.json'), 'utf8');
  const dt = await page.evaluateHandle((text) => {
    const dt = new DataTransfer();
    dt.items.add(new File([text], 'dropped.json', { type: 'application/json' }));
    return dt;
  }, text);
  await page.dispatchEvent('main', 'drop', { dataTransfer: dt });
  await page.waitForFunction(() => document.querySelector('#message')?.textContent.includes('imported dropped.json'));
  await waitStat(page, 'depth', 3);
  await page.close();
});

test('bad files show a message and leave the mask unchanged', async () => {
  const page = await fresh();
  await loadPreset(page, 'causal', 6);
  const before = await exportJson(page);
  for (const [file, expected] of [
    ['bad-syntax.json', /could not import bad-syntax\.json: malformed JSON at line/],
    ['bad-version.json', /unsupported format version 2/],
    ['bad-rows.json', /row 1, column 2: unexpected character/],
    ['too-big.json', /n = 600; the editor handles up to 512/],
  ]) {
    await page.setInputFiles('#import', path.join(FIX, file));
    await page.waitForFunction((f) => document.querySelector('#message.error')?.textContent.includes(f), file === 'too-big.json' ? 'n = 600' : file);
    assert.match(await page.locator('#message').innerText(), expected);
    assert.equal(await exportJson(page), before);
  }
  await shot(page, 'bad-import-message');
  await page.close();
});

test('kernel parameters (FlashMask, FlashAttention) import as the mask the CLI exported them from', async () => {
  const page = await fresh();
  const kernelFile = (name, preset, kind) => {
    const mask = execFileSync(CLI, ['preset', ...preset], { encoding: 'utf8' });
    const out = execFileSync(CLI, ['export', '-', '--to', kind], { input: mask, encoding: 'utf8' });
    const file = path.join(ART, name);
    writeFileSync(file, out);
    return { file, rows: JSON.parse(execFileSync(CLI, ['convert', '-'], { input: mask, encoding: 'utf8' })).rows };
  };
  const doc = kernelFile('document9.flashmask.json', ['document', '--n', '9', 'segments=4,5', 'causal=true'], 'flashmask');
  await page.setInputFiles('#import', doc.file);
  await page.waitForFunction(() => document.querySelector('#message')?.textContent.includes('kernel parameters'));
  await waitStat(page, 'n', 9);
  assert.deepEqual(JSON.parse(await exportJson(page)).rows, doc.rows);
  // A FlashAttention window takes the editor's size (9), and says so.
  const win = kernelFile('window9.flash.json', ['sliding-window', '--n', '9', 'w=3'], 'flash');
  await page.setInputFiles('#import', win.file);
  await page.waitForFunction(() => document.querySelector('#message')?.textContent.includes("at the editor's size"));
  assert.deepEqual(JSON.parse(await exportJson(page)).rows, win.rows);
  // A refused verdict changes nothing.
  const no = kernelFile('dilated.flash.json', ['dilated-window', '--n', '9', 'w=3', 'd=2'], 'flash');
  await page.setInputFiles('#import', no.file);
  await page.waitForFunction(() => document.querySelector('#message.error')?.textContent.includes('cannot represent'));
  assert.deepEqual(JSON.parse(await exportJson(page)).rows, win.rows);
  await page.close();
});

test('a pasted FlexAttention mask_mod imports at the chosen n; a refused one names its line and changes nothing', async () => {
  const page = await fresh();
  await loadPreset(page, 'causal', 6);
  const text = [
    'from torch.nn.attention.flex_attention import and_masks',
    'W = 3',
    'def causal(b, h, q_idx, kv_idx):',
    '    return q_idx >= kv_idx',
    'def window(b, h, q_idx, kv_idx):',
    '    return q_idx - kv_idx < W',
    'mask_mod = and_masks(causal, window)',
    '',
  ].join('\n');
  const file = path.join(ART, 'pasted_mask_mod.py');
  writeFileSync(file, text);
  const want = JSON.parse(execFileSync(CLI, ['convert', file, '--n', '10'], { encoding: 'utf8' })).rows;
  await page.locator('#paste-import').evaluate((d) => {
    d.open = true;
  });
  await page.fill('#paste-text', text);
  await page.fill('#paste-n', '10');
  await page.locator('#paste-n').dispatchEvent('change');
  await page.click('#paste-import-button');
  await waitStat(page, 'n', 10);
  assert.match(await page.locator('#message').innerText(), /imported mask_mod `mask_mod` from the pasted text at n = 10/);
  const before = await exportJson(page);
  assert.deepEqual(JSON.parse(before).rows, want);
  await shot(page, 'paste-mask-mod');
  // A lookup into None is refused with its place; the mask stays, and undo goes back to the preset.
  await page.fill('#paste-text', 'MASK = None\ndef mask_mod(b, h, q_idx, kv_idx):\n    return MASK[q_idx, kv_idx]\n');
  await page.click('#paste-import-button');
  await page.waitForFunction(() => document.querySelector('#message.error')?.textContent.includes('line 3, column 16'));
  assert.match(await page.locator('#message').innerText(), /a None is not subscriptable.*Nothing was changed/);
  assert.equal(await exportJson(page), before);
  await page.click('#undo');
  await waitStat(page, 'n', 6);
  // A .py file by the picker works too (its size from --n is not known: the editor's n = 6).
  await page.setInputFiles('#import', file);
  await page.waitForFunction(() => document.querySelector('#message')?.textContent.includes('pasted_mask_mod.py at n = 6'));
  const want6 = JSON.parse(execFileSync(CLI, ['convert', file, '--n', '6'], { encoding: 'utf8' })).rows;
  assert.deepEqual(JSON.parse(await exportJson(page)).rows, want6);
  await page.close();
});

test('share link round trip, and a tampered link is refused', async () => {
  const page = await fresh();
  await loadPreset(page, 'dilated-window', 10, { w: 3, d: 2 });
  const json = JSON.parse(await exportJson(page));
  await page.click('#share');
  await page.waitForSelector('#share-url');
  const url = await page.locator('#share-url').inputValue();
  assert.match(url, /#n=10&m=[A-Za-z0-9_-]+$/);
  const other = await context.newPage();
  await other.goto(url);
  await other.waitForFunction(() => document.querySelector('#message')?.textContent.includes('share link'));
  await waitStat(other, 'n', 10);
  assert.deepEqual(JSON.parse(await exportJson(other)).rows, json.rows);
  assert.equal(new URL(other.url()).hash, '', 'the fragment is removed after loading');
  // Tampered: a byte short. The autosaved mask (just loaded) stays.
  await other.goto(url.slice(0, -3));
  await other.waitForSelector('#message.error');
  assert.match(await other.locator('#message').innerText(), /share link is damaged/);
  assert.deepEqual(JSON.parse(await exportJson(other)).rows, json.rows);
  await other.goto(url.replace('n=10', 'n=99999'));
  await other.waitForFunction(() => document.querySelector('#message.error')?.textContent.includes('out of range'));
  // Labels travel in the link (as text): a labelled file, shared and reopened.
  await page.setInputFiles('#import', path.join(FIX, 'prefix5-labels.json'));
  await waitStat(page, 'n', 5);
  await page.click('#share');
  await page.waitForFunction(() => document.querySelector('#share-url')?.value.includes('&l='));
  const labelled = await page.locator('#share-url').inputValue();
  await other.goto(labelled);
  await waitStat(other, 'n', 5);
  assert.equal(await other.locator('#hasse .node', { hasText: '<img' }).count(), 1);
  assert.equal(await other.locator('img').count(), 0, 'a label is never markup');
  assert.deepEqual(JSON.parse(await exportJson(other)).labels, JSON.parse(readFileSync(path.join(FIX, 'prefix5-labels.json'), 'utf8')).labels);
  // Tampered labels: refused, the mask stays.
  await other.goto(labelled.replace(/&l=.*/, '&l=WyJhIl0'));
  await other.waitForFunction(() => document.querySelector('#message.error')?.textContent.includes('expected 5 labels'));
  await waitStat(other, 'n', 5);
  await other.close();
  await page.close();
});

test('reload restores the work from localStorage', async () => {
  const page = await fresh();
  await setSize(page, 5);
  await paintCausal(page, 5);
  await waitStat(page, 'entries', 15);
  await page.reload();
  await page.waitForFunction(() => document.querySelector('#message')?.textContent.includes('restored'));
  await waitStat(page, 'n', 5);
  assert.equal(await stat(page, 'entries'), '15');
  await page.close();
});

test('themes and the full-order view render', async () => {
  const page = await fresh();
  await loadPreset(page, 'block-causal', 12, { s: 3 });
  await page.click('#view-full');
  await page.waitForFunction(() => document.querySelectorAll('#hasse .edge.full').length === 6);
  await page.click('#theme');
  await page.waitForFunction(() => document.documentElement.dataset.theme === 'dark');
  await shot(page, 'dark-full-order');
  await page.close();
});

test('the Theory link opens docs/THEORY.md, copied into the build', async () => {
  const page = await fresh();
  const link = page.locator('#theory-link');
  assert.equal(await link.getAttribute('href'), 'THEORY.md');
  const served = await page.evaluate(async () => {
    const res = await fetch(document.querySelector('#theory-link').href);
    return res.ok ? res.text() : `HTTP ${res.status}`;
  });
  assert.equal(served, readFileSync(path.join(ROOT, 'docs', 'THEORY.md'), 'utf8'));
  await page.close();
});

test('analysis and layout times at N = 64, 256, 512 (measured in wasm)', async () => {
  const page = await fresh();
  const timing = async () => {
    const t = await page.locator('#timing').innerText();
    const m = t.match(/analysis ([\d.]+) ms · layout ([\d.]+) ms \((\S+), (\d+) nodes\)/);
    assert.ok(m, t);
    return { analysis_ms: Number(m[1]), layout_ms: Number(m[2]), engine: m[3], nodes: Number(m[4]) };
  };
  for (const n of [64, 256, 512]) {
    for (const [name, params] of [
      ['sliding-window', { w: 4 }],
      ['random', { p: 0.01, causal: true, seed: 1 }],
    ]) {
      await loadPreset(page, name, n, params);
      await waitStat(page, 'n', n);
      measurements[`${name} n=${n}`] = await timing();
    }
  }
  await shot(page, 'n512');
  // Painting stays live at n = 512: a stroke updates the stats.
  const before = await stat(page, 'entries');
  const a = await cellCentre(page, 300, 10);
  await page.mouse.move(a.x, a.y);
  await page.mouse.down();
  await page.mouse.move(a.x + 40, a.y, { steps: 5 });
  await page.mouse.up();
  await page.waitForFunction((b) => document.querySelector('#stat-entries').textContent !== b, before);
  measurements['n=512 stroke: analysis + layout + grid redraw'] = {
    ...(await timing()),
    draw_ms: Number(await page.locator('#grid').getAttribute('data-draw-ms')),
  };
  // Hovering reuses the cell image: only overlays are redrawn (median of 7 hovers).
  const hovers = [];
  for (let i = 0; i < 7; i++) {
    // Cells are under a pixel wide here, so wait for any new hover sentence.
    const previous = await page.locator('#hover').innerText();
    const h = await cellCentre(page, 100 + 20 * i, 200);
    await page.mouse.move(h.x, h.y);
    await page.waitForFunction((p) => {
      const t = document.querySelector('#hover').textContent;
      return t.startsWith('position ') && t !== p;
    }, previous);
    hovers.push(Number(await page.locator('#grid').getAttribute('data-draw-ms')));
  }
  hovers.sort((a, b) => a - b);
  measurements['n=512 hover: grid redraw'] = { median_draw_ms: hovers[3], all: hovers };
  // ~500 classes: the layered layout, then layout-rs forced, for comparison.
  await loadPreset(page, 'sliding-window', 500, { w: 2 });
  measurements['hasse 500 nodes (auto)'] = await timing();
  assert.equal(measurements['hasse 500 nodes (auto)'].engine, 'layered');
  await page.close();
  // layout-rs forced on the same ~500-node chain and on a DAG with long edges.
  const p = await fresh('?layout=layout-rs');
  for (const [name, n, params] of [
    ['sliding-window', 500, { w: 2 }],
    ['random', 60, { p: 0.05, causal: true, seed: 3 }],
    ['random', 120, { p: 0.02, causal: true, seed: 3 }],
  ]) {
    await loadPreset(p, name, n, params);
    await waitStat(p, 'n', n);
    measurements[`layout-rs forced: ${name} n=${n}`] = await p.locator('#timing').innerText();
  }
  await p.close();
});

test('Export menu: every interop format downloads what the core writes', async () => {
  const page = await fresh();
  await loadPreset(page, 'causal', 8);
  const got = {};
  for (const [name, ext] of [
    ['flex', 'py'],
    ['npy', 'npy'],
    ['dot', 'dot'],
    ['blocks', 'txt'],
    ['blocks-json', 'json'],
    ['flash', 'json'],
    ['flashmask', 'json'],
  ]) {
    const [download] = await Promise.all([page.waitForEvent('download'), clickExport(page, `#export-${name}`)]);
    assert.equal(download.suggestedFilename(), `hasseflow-mask.${ext}`);
    got[name] = readFileSync(await download.path());
    assert.equal(await page.locator('#export-menu[open]').count(), 0, 'choosing an item closes the menu');
  }
  // .npy v1.0: magic, version, little-endian header length, a bool (8, 8) array, 64 data bytes.
  const npy = got.npy;
  assert.equal(npy.subarray(0, 6).toString('latin1'), '\x93NUMPY');
  assert.deepEqual([npy[6], npy[7]], [1, 0]);
  const headerLen = npy.readUInt16LE(8);
  const header = npy.subarray(10, 10 + headerLen).toString('latin1');
  assert.match(header, /'descr': '\|b1'/);
  assert.match(header, /'shape': \(8, 8\)/);
  assert.equal(npy.length, 10 + headerLen + 64);
  assert.equal((10 + headerLen) % 64, 0);
  const data = [...npy.subarray(10 + headerLen)];
  assert.deepEqual(data, Array.from({ length: 64 }, (_, i) => (i % 8 <= Math.floor(i / 8) ? 1 : 0)));
  assert.match(got.flex.toString(), /def mask_mod\(b, h, q_idx, kv_idx\)/);
  assert.match(got.dot.toString(), /^digraph hasse \{$/m);
  assert.match(got.dot.toString(), /c6 -> c7;/);
  assert.match(got.blocks.toString(), /full/);
  const blocks = JSON.parse(got['blocks-json'].toString());
  assert.equal(blocks.n, 8);
  assert.equal(blocks.block_size, 1);
  const flash = JSON.parse(got.flash.toString());
  assert.ok(JSON.stringify(flash).includes('true'), JSON.stringify(flash));
  JSON.parse(got.flashmask.toString());
  for (const [name, bytes] of Object.entries(got)) writeFileSync(path.join(ART, `export-causal8-${name}`), bytes);
  await page.close();
});

test('import .npy by the picker and by drag and drop; a malformed .npy changes nothing', async () => {
  const page = await fresh();
  await loadPreset(page, 'causal', 8);
  const [download] = await Promise.all([page.waitForEvent('download'), clickExport(page, '#export-npy')]);
  const npy = readFileSync(await download.path());
  await loadPreset(page, 'sliding-window', 5, { w: 2 });
  await page.setInputFiles('#import', { name: 'causal8.npy', mimeType: 'application/octet-stream', buffer: npy });
  await page.waitForFunction(() => document.querySelector('#message')?.textContent.includes('imported causal8.npy'));
  await waitStat(page, 'n', 8);
  assert.equal(await stat(page, 'entries'), '36');
  // Undoable like any load.
  await page.keyboard.press('Control+z');
  await waitStat(page, 'n', 5);
  // Drag and drop.
  const dt = await page.evaluateHandle((bytes) => {
    const dt = new DataTransfer();
    dt.items.add(new File([new Uint8Array(bytes)], 'dropped.npy'));
    return dt;
  }, [...npy]);
  await page.dispatchEvent('main', 'drop', { dataTransfer: dt });
  await page.waitForFunction(() => document.querySelector('#message')?.textContent.includes('imported dropped.npy'));
  await waitStat(page, 'n', 8);
  const before = await exportJson(page);
  // Truncated data and a wrong dtype: a message, the mask unchanged.
  const bad = npy.subarray(0, npy.length - 5);
  await page.setInputFiles('#import', { name: 'bad.npy', mimeType: 'application/octet-stream', buffer: bad });
  await page.waitForFunction(() => document.querySelector('#message.error')?.textContent.includes('bad.npy'));
  assert.match(await page.locator('#message').innerText(), /could not import bad\.npy: .*Nothing was changed/);
  assert.equal(await exportJson(page), before);
  await shot(page, 'bad-npy-message');
  await page.close();
});

test('block-sparsity overlay, block statistics and kernel verdicts', async () => {
  const page = await fresh();
  await loadPreset(page, 'causal', 16);
  assert.equal(await page.inputValue('#block-size'), '2');
  await page.check('#show-blocks');
  await page.fill('#block-size', '8');
  await page.locator('#block-size').dispatchEvent('change');
  await page.waitForFunction(() => document.querySelector('#blocks-full')?.textContent === '1');
  assert.equal(await page.locator('#blocks-partial').innerText(), '2');
  assert.equal(await page.locator('#blocks-empty').innerText(), '1');
  assert.equal(await page.locator('#blocks-sparsity').innerText(), '25.0%');
  assert.equal(await page.locator('#blocks-flops').innerText(), '75.0%');
  assert.match(await page.locator('#verdict-flash').innerText(), /FlashAttention: yes: flash_attn_func\(q, k, v, causal=True/);
  assert.match(await page.locator('#verdict-flashmask').innerText(), /FlashMask: yes/);
  await page.fill('#block-size', '4');
  await page.locator('#block-size').dispatchEvent('change');
  await page.waitForFunction(() => document.querySelector('#blocks-full')?.textContent === '6');
  await shot(page, 'block-overlay-causal16');
  await loadPreset(page, 'butterfly', 4);
  await page.waitForFunction(() => document.querySelector('#verdict-flash')?.textContent.includes('no:'));
  await shot(page, 'block-overlay-butterfly');
  await page.close();
});

// The CLI (support.mjs) is the oracle for the designer.
const cliDerive = (args) => JSON.parse(execFileSync(CLI, ['derive', ...args, '--json'], { encoding: 'utf8' }));

async function openDesigner(page) {
  await page.click('#tab-designer');
  await page.waitForSelector('#designer');
}

/** Chooses a family and its parameters, presses Derive, and returns ms from the click to the first frame after the report appeared. */
async function deriveFamily(page, family, params = {}) {
  await page.selectOption('#family', family);
  for (const [k, v] of Object.entries(params)) {
    const el = page.locator(`#family-${k}`);
    if (typeof v === 'boolean') await el.setChecked(v);
    else {
      await el.fill(String(v));
      await el.dispatchEvent('change');
    }
  }
  const seq = await page.evaluate(() => Number(document.querySelector('#design-time')?.dataset.seq ?? 0));
  const ms = await page.evaluate(async (seq) => {
    const start = performance.now();
    document.querySelector('#derive').click();
    await new Promise((resolve, reject) => {
      const check = () => {
        const t = document.querySelector('#design-time');
        if (t && Number(t.dataset.seq) > seq && document.querySelector('#derived-dense')) resolve();
        else if (performance.now() - start > 20000) reject(new Error('no new derivation after 20 s'));
        else requestAnimationFrame(check);
      };
      check();
    });
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    return performance.now() - start;
  }, seq);
  await page.waitForFunction(() => document.querySelector('#message')?.textContent.includes('derived'));
  return ms;
}

const derivedRows = (page) => page.locator('#derived-dense').evaluate((c) => c.dataset.rows.split(','));
const sparseRows = (page) => page.locator('#derived-sparse').evaluate((c) => c.dataset.rows.split(','));

test('designer: its module is fetched on the first derivation, once; a failed fetch is one line, and Derive again loads it', async () => {
  const page = await fresh();
  const fetched = moduleFetches(page, 'hasseflow-designer');
  await openDesigner(page);
  assert.deepEqual(fetched, [], 'the page, the editor and the Designer before a derivation fetch no pipeline');
  // The module's wasm is held, then refused: the deriving state shows, then the failure.
  const module = await holdModule(page, 'hasseflow-designer');
  await page.selectOption('#family', 'butterfly');
  await page.click('#derive');
  await page.waitForSelector('#design-deriving');
  assert.match(await page.locator('#design-deriving').innerText(), /deriving butterfly n=4: loading the Designer's module/);
  await shot(page, 'designer-deriving');
  module.release();
  await page.waitForFunction(() => document.querySelector('#message.error')?.textContent.includes("the Designer's module did not load"));
  const failed = await messageText(page);
  assert.match(failed, /^could not derive butterfly n=4: the Designer's module did not load \(.+\)\. Nothing was changed\.$/);
  assert.equal(await page.locator('#design-deriving').count(), 0, 'no longer deriving');
  assert.equal(await page.locator('#design-report').count(), 0, 'nothing derived');
  // Derive again: the module loads and the derivation is the CLI's.
  await module.restore();
  await deriveFamily(page, 'butterfly', { n: 4 });
  assert.deepEqual(await derivedRows(page), cliDerive(['butterfly', '--n', '4']).mask);
  await deriveFamily(page, 'butterfly', { n: 5 });
  const wasm = fetched.filter((f) => f.endsWith('_bg.wasm'));
  assert.equal(wasm.length, 2, `the refused fetch and one load: ${wasm.join(', ')}`);
  await page.close();
});

test('designer: the three case studies and MAE equal hasseflow derive --json', async () => {
  const page = await fresh();
  await openDesigner(page);
  const cases = [
    ['autoregressive', { n: 6 }, ['autoregressive', '--n', '6'], 'designer-autoregressive'],
    ['block', { n: 6, block: 2 }, ['block', '--n', '6', '--block', '2'], 'designer-block-two-stream'],
    ['butterfly', { n: 4 }, ['butterfly', '--n', '4'], 'designer-butterfly'],
    ['mae', { n: 6, span: 2 }, ['mae', '--n', '6', '--span', '2'], 'designer-mae'],
  ];
  for (const [family, params, args, name] of cases) {
    await deriveFamily(page, family, params);
    const want = cliDerive(args);
    assert.deepEqual(await derivedRows(page), want.mask, family);
    assert.deepEqual(await sparseRows(page), want.sparse_mask, family);
    assert.equal(await page.locator('#design-nodes').innerText(), `${want.nodes_before} → ${want.nodes_after}`);
    assert.equal(await page.locator('#design-depth').innerText(), `${want.depth_dense} / ${want.depth_sparse}`);
    assert.equal(await page.locator('#design-leaks').innerText(), want.leaks.length ? String(want.leaks.length) : 'none');
    // Supervision density (target tokens / sample tokens) and the loss position share, as the CLI reports them.
    assert.equal(
      await page.locator('#design-supervision').innerText(),
      `${(100 * want.supervision_density).toFixed(1)}% (${want.target_tokens} / ${want.sample_tokens} tokens)`,
    );
    assert.equal(
      await page.locator('#design-loss-share').innerText(),
      `${(100 * want.loss_position_share).toFixed(1)}% (${want.labelled_positions} / ${want.positions.length} positions)`,
    );
    const inputs = await page.locator('#derived-io tr.inputs td').allInnerTexts();
    assert.deepEqual(inputs, want.positions);
    assert.equal(await page.locator('#merged-hasse .node').count(), want.nodes.length, 'merged nodes, padding included');
    // The drawn tasks include the family's padding tasks, which the report does not count.
    const drawn = await page.locator('#tasks .task').count();
    assert.ok(drawn >= Math.min(24, want.tasks) && drawn <= 24, `${drawn} tasks drawn`);
    await shot(page, name);
  }
  // Butterfly n=4: 16 -> 10 nodes, the forward chain, the backward chain, the predictors between.
  await deriveFamily(page, 'butterfly', { n: 4 });
  assert.equal(await page.locator('#design-nodes').innerText(), '16 → 10');
  // Equivalent nodes share a colour; hovering one lights up its equivalents in every task.
  const first = page.locator('#tasks .task').nth(1).locator('.node').first();
  const merged = await first.getAttribute('data-merged');
  const fill = await first.locator('rect').getAttribute('fill');
  await first.hover();
  await page.waitForFunction((m) => document.querySelectorAll(`#tasks .node.equiv[data-merged="${m}"]`).length >= 2, merged);
  for (const el of await page.locator(`#tasks .node[data-merged="${merged}"] rect`).all()) {
    assert.equal(await el.getAttribute('fill'), fill);
  }
  assert.equal(await page.locator(`#merged-hasse .node.equiv[data-merged="${merged}"]`).count(), 1);
  // Its positions light up in the derived masks and in the inputs/labels row.
  await page.waitForFunction(() => document.querySelector('#derived-dense')?.dataset.lit);
  const lit = (await page.locator('#derived-dense').getAttribute('data-lit')).split(',').map(Number);
  const positions = (await page.locator('#derived-dense').getAttribute('data-rows')).split(',').length;
  assert.ok(lit.length >= 1 && lit.every((i) => i >= 0 && i < positions), `lit positions ${lit}`);
  assert.equal(await page.locator('#derived-sparse').getAttribute('data-lit'), lit.join(','));
  assert.equal(await page.locator('#derived-io tr.inputs td.lit').count(), lit.length);
  await shot(page, 'designer-butterfly-hover');
  // Export the derived task: the derive --json object.
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-derived')]);
  assert.equal(download.suggestedFilename(), 'hasseflow-derived.json');
  const exported = JSON.parse(readFileSync(await download.path(), 'utf8'));
  const want = cliDerive(['butterfly', '--n', '4']);
  // One object, field for field (both come from the core's Derivation::to_json).
  assert.deepEqual(exported, want);
  assert.equal(exported.supervision_density, 1);
  // Open in editor: the mask with its position labels, undoable.
  await page.click('#open-derived');
  await page.waitForSelector('#grid');
  await waitStat(page, 'n', 12);
  assert.equal(await stat(page, 'depth'), '1');
  // Position labels came along (the inputs), shown as text in the order view.
  assert.ok((await page.locator('#hasse .node', { hasText: 'w_0' }).count()) >= 1);
  await shot(page, 'designer-butterfly-in-editor');
  // It carries the provenance `derive --mask-out` writes: its FlexAttention export is the closed
  // form, the same mask_mod the CLI writes from that file.
  const [flex] = await Promise.all([page.waitForEvent('download'), clickExport(page, '#export-flex')]);
  const appPy = readFileSync(await flex.path(), 'utf8');
  const maskOut = path.join(ART, 'derived-butterfly-4.json');
  execFileSync(CLI, ['derive', 'butterfly', '--n', '4', '--mask-out', maskOut]);
  const cliPy = execFileSync(CLI, ['export', maskOut, '--to', 'flex'], { encoding: 'utf8' });
  const body = (py) => py.slice(py.indexOf('def mask_mod'), py.indexOf('def block_mask_for'));
  assert.match(appPy, /Closed form of preset 'butterfly'/);
  assert.ok(!appPy.includes('MASK_TENSOR'), 'a closed form, not a lookup table');
  assert.ok(body(cliPy).includes('return'), 'the CLI wrote a mask_mod');
  assert.equal(body(appPy), body(cliPy));
  // The layer view works on it.
  await page.click('#layer-prev');
  await page.waitForFunction(() => document.querySelector('#layer-value').textContent === '0');
  await page.keyboard.press('Control+z');
  await waitStat(page, 'n', 8);
  await page.close();
});

test('designer form: n carries over between families; the butterfly radius survives mask tokens', async () => {
  const page = await fresh();
  await openDesigner(page);
  await page.selectOption('#family', 'butterfly');
  const set = async (id, v) => {
    await page.locator(id).fill(String(v));
    await page.locator(id).dispatchEvent('change');
  };
  await set('#family-n', 7);
  await set('#family-radius', 3);
  await page.locator('#family-aggregate-mask').setChecked(true);
  assert.equal(await page.locator('#family-radius').count(), 0, 'no radius with mask tokens');
  await page.locator('#family-aggregate-mask').setChecked(false);
  assert.equal(await page.locator('#family-radius').inputValue(), '3');
  await page.selectOption('#family', 'mae');
  assert.equal(await page.locator('#family-n').inputValue(), '7');
  await page.selectOption('#family', 'butterfly');
  assert.equal(await page.locator('#family-radius').inputValue(), '3');
  // What the form shows is what is derived: the CLI's report for the same options.
  await deriveFamily(page, 'butterfly');
  assert.deepEqual(await derivedRows(page), cliDerive(['butterfly', '--n', '7', '--radius', '3']).mask);
  await page.close();
});

test('designer: the last family is saved and derived again after a reload', async () => {
  const page = await fresh();
  await openDesigner(page);
  await deriveFamily(page, 'block', { n: 6, block: 2, interleaved: true });
  const nodes = await page.locator('#design-nodes').innerText();
  const rows = await derivedRows(page);
  await page.reload();
  await page.waitForSelector('#grid');
  await page.click('#tab-designer');
  await page.waitForSelector('#derived-dense');
  assert.equal(await page.locator('#design-nodes').innerText(), nodes);
  assert.deepEqual(await derivedRows(page), rows);
  assert.equal(await page.locator('#family').inputValue(), 'block');
  assert.equal(await page.locator('#family-interleaved').isChecked(), true);
  // A designer link opens the designer on the same derivation, in a fresh browser profile too.
  await page.click('#share-design');
  await page.waitForSelector('#design-url');
  const url = await page.locator('#design-url').inputValue();
  assert.match(url, /#design=[A-Za-z0-9_-]+$/);
  const other = await launch();
  const p2 = await other.newPage();
  await p2.goto(url);
  await p2.waitForSelector('#derived-dense');
  assert.equal(await p2.locator('#design-nodes').innerText(), nodes);
  assert.deepEqual(await derivedRows(p2), rows);
  await p2.goto(url.replace(/#design=.*/, '#design=%%%'));
  await p2.waitForFunction(() => document.querySelector('#message.error')?.textContent.includes('design link is damaged'));
  await other.closeAll();
  await page.close();
});

test('designer: a user family file, and a bad one changes nothing', async () => {
  const page = await fresh();
  await openDesigner(page);
  await page.setInputFiles('#family-file', path.join(ROOT, 'tests', 'data', 'family_example.json'));
  await page.waitForFunction(() => document.querySelector('#message')?.textContent.includes('derived family file family_example.json'));
  const want = cliDerive([path.join(ROOT, 'tests', 'data', 'family_example.json')]);
  assert.deepEqual(await derivedRows(page), want.mask);
  assert.equal(await page.locator('#design-nodes').innerText(), `${want.nodes_before} → ${want.nodes_after}`);
  await shot(page, 'designer-family-file');
  await page.setInputFiles('#family-file', { name: 'bad-family.json', mimeType: 'application/json', buffer: Buffer.from('{"format": "hasseflow-family", "version": 1, "tasks": [') });
  await page.waitForFunction(() => document.querySelector('#message.error')?.textContent.includes('bad-family.json'));
  assert.match(await page.locator('#message').innerText(), /could not derive family file bad-family\.json: .*Nothing was changed\./);
  assert.deepEqual(await derivedRows(page), want.mask, 'the previous derivation stays');
  await shot(page, 'designer-bad-family');
  await page.click('#tab-editor');
  await waitStat(page, 'n', 8);
  await page.close();
});

test('designer: time to derive and draw butterfly n=32 and block generation n=64 s=8', async () => {
  const page = await fresh();
  await openDesigner(page);
  for (const [family, params, args, key] of [
    ['butterfly', { n: 32 }, ['butterfly', '--n', '32'], 'designer_butterfly_n32'],
    ['block', { n: 64, block: 8 }, ['block', '--n', '64', '--block', '8'], 'designer_block_n64_s8'],
  ]) {
    const total = await deriveFamily(page, family, params);
    const derive = Number(await page.locator('#design-time').getAttribute('data-ms'));
    assert.deepEqual(await derivedRows(page), cliDerive(args).mask);
    measurements[key] = { derive_ms: derive, click_to_painted_ms: Math.round(total * 10) / 10 };
    if (family === 'butterfly') assert.match(await page.locator('#tasks-note').innerText(), /first 24 of 3[2-9] tasks/);
    await shot(page, key.replaceAll('_', '-'));
  }
  await page.close();
});
