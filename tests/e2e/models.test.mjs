// End-to-end tests of the Models view: gallery models at long contexts through the structured
// reach engine in the browser, checked against the CLI (`hasseflow model ... --json`), the page's
// responsiveness during a 1M-token run, refused configs, zoom and the scaled copy. Timings go to
// target/e2e-artifacts/models-measurements.json; screenshots at 1440x900.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ART, CLI, launch, openFresh, shot, startServer, waitStat } from './support.mjs';

let server;
let context;
const measurements = {};

before(async () => {
  server = await startServer();
  context = await launch();
});

after(async () => {
  writeFileSync(path.join(ART, 'models-measurements.json'), JSON.stringify(measurements, null, 2) + '\n');
  console.log('models timings (ms):', JSON.stringify(measurements));
  if (context) await context.closeAll();
  if (server) server.stop();
});

const cli = (name, n) => JSON.parse(execFileSync(CLI, ['model', name, '--context', String(n), '--json'], { encoding: 'utf8' }));

async function openModels() {
  const page = await openFresh(context, server.base);
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.click('#tab-models');
  await done(page);
  return page;
}

/** Waits until the view shows the finished run of the current settings and range. */
async function done(page, timeout = 120000) {
  await page.waitForFunction(() => document.querySelector('#models-view')?.dataset.state === 'done'
    && document.querySelector('#model-verdict'), null, { timeout });
}

/** Picks a gallery model and a context, and waits for the run. */
async function run(page, name, n) {
  await page.selectOption('#model-gallery', name);
  await page.fill('#model-n', String(n));
  await page.locator('#model-n').dispatchEvent('change');
  await page.waitForFunction(([n]) => document.querySelector('#model-verdict')?.dataset.n === n
    && document.querySelector('#models-view')?.dataset.state === 'done', [String(n)], { timeout: 120000 });
}

const verdict = (page) => page.locator('#model-verdict').evaluate((e) => ({ ...e.dataset, text: e.textContent }));

test('Mistral 7B at 131072: 31 positions short at layer 32, every layer as the CLI counts it', async () => {
  const page = await openModels();
  await run(page, 'mistral-7b-v0.1', 131072);
  const v = await verdict(page);
  const expected = cli('mistral-7b-v0.1', 131072);
  assert.match(v.text, /31 of 131072 positions short at the last layer \(496 cells missing\)/);
  assert.match(v.text, /after layer 32 of 32/);
  assert.equal(v.short, '31');
  assert.equal(v.depth, '32');
  assert.equal(expected.verdict, '31 of 131072 positions short at the last layer (496 cells missing)');
  measurements['mistral-7b-v0.1 @ 131072'] = Number(v.ms);
  // The table's |R(l)| per layer equals the CLI's growth.
  const cells = await page.$$eval('#model-layers-table tbody tr', (rows) => rows.map((r) => Number(r.dataset.cells)));
  assert.deepEqual(cells, expected.growth.slice(1));
  // The slider picks a layer; the counts beside the map follow.
  await page.locator('#model-layer').fill('3');
  await page.waitForFunction(() => document.querySelector('#model-counts')?.dataset.layer === '3');
  assert.equal(Number(await page.locator('#model-counts').getAttribute('data-cells')), expected.growth[3]);
  await shot(page, 'models-mistral-131072');
  // The export is the CLI's object (timings aside).
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#model-export')]);
  const exported = JSON.parse(readFileSync(await download.path(), 'utf8'));
  for (const k of ['name', 'n', 'layers', 'types', 'pattern', 'growth', 'full_at', 'shortfall', 'limit_cells', 'leaks', 'verdict', 'per_layer', 'limit']) {
    assert.deepEqual(exported[k], expected[k], k);
  }
  // Zoom narrows the range and asks for the rows of that range.
  await page.click('#model-zoom-in');
  await page.waitForFunction(() => document.querySelector('#model-heat')?.getAttribute('aria-label').includes('queries 32768–98303')
    && document.querySelector('#models-view')?.dataset.state === 'done', null, { timeout: 60000 });
  await page.locator('#model-heat').hover({ position: { x: 480, y: 10 } });
  await page.waitForFunction(() => document.querySelector('#model-heat-hover')?.textContent.startsWith('query '));
  await shot(page, 'models-mistral-zoomed');
  assert.deepEqual(page.errors, []);
  await page.close();
});

/** Installs a 5 ms ticker recording the longest gap between ticks (a blocked main thread shows
 * as a long gap) and a record of the view's state when a click on the theme button is handled. */
async function watchMainThread(page) {
  await page.evaluate(() => {
    clearInterval(window.__ticker);
    window.__gap = 0;
    window.__clickedWhile = undefined;
    let last = performance.now();
    window.__ticker = setInterval(() => {
      const now = performance.now();
      window.__gap = Math.max(window.__gap, now - last);
      last = now;
    }, 5);
    if (!window.__listening) {
      window.__listening = true;
      document.querySelector('#theme').addEventListener('click', () => {
        window.__clickedWhile = document.querySelector('#models-view').dataset.state;
      });
    }
  });
}

const mainThread = (page) => page.evaluate(() => ({ gap: window.__gap, clickedWhile: window.__clickedWhile }));

async function setContext(page, n) {
  await page.fill('#model-n', String(n));
  await page.locator('#model-n').dispatchEvent('change');
}

async function finishedAt(page, n) {
  await page.waitForFunction((n) => document.querySelector('#model-verdict')?.dataset.n === n
    && document.querySelector('#models-view')?.dataset.state === 'done', String(n), { timeout: 180000 });
}

test('Llama 4 Scout at 1,048,576 completes while the page stays responsive', async () => {
  const page = await openModels();
  await page.selectOption('#model-gallery', 'llama-4-scout-17b-16e');
  await done(page);
  await watchMainThread(page);
  await setContext(page, 1048576);
  await finishedAt(page, 1048576);
  const scout = await mainThread(page);
  const v = await verdict(page);
  measurements['llama-4-scout-17b-16e @ 1048576'] = Number(v.ms);
  measurements['llama-4-scout @ 1M: longest main-thread gap'] = Math.round(scout.gap);
  assert.match(v.text, /everything the stack can reach is reached at layer 4 of 48/);
  const expected = cli('llama-4-scout-17b-16e', 1048576);
  const cells = await page.$$eval('#model-layers-table tbody tr', (rows) => rows.map((r) => Number(r.dataset.cells)));
  assert.deepEqual(cells, expected.growth.slice(1));
  // One step is one layer (or the limit) at 1M positions: the page never waits much longer.
  assert.ok(scout.gap < 500, `the main thread was blocked for ${scout.gap} ms`);
  await shot(page, 'models-llama4-scout-1m');

  // Mistral 7B at 1M never saturates (32 layers of window 4096 < n), so every layer is computed:
  // long enough to click another control mid-run.
  await page.selectOption('#model-gallery', 'mistral-7b-v0.1');
  await finishedAt(page, 1048576);
  measurements['mistral-7b-v0.1 @ 1048576'] = Number((await verdict(page)).ms);
  // The theme button's centre, found before the run: the click mid-run is then one input event
  // (page.click's checks take round trips, and the release build's run is over in ~220 ms).
  const box = await page.locator('#theme').boundingBox();
  await setContext(page, 1048575);
  await page.waitForSelector('#models-progress[data-total="32"]');
  await page.waitForFunction(() => Number(document.querySelector('#models-progress')?.dataset.done) >= 1);
  await watchMainThread(page);
  const theme = await page.evaluate(() => document.documentElement.dataset.theme);
  await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
  await page.waitForFunction((t) => document.documentElement.dataset.theme !== t, theme);
  await finishedAt(page, 1048575);
  const mistral = await mainThread(page);
  measurements['mistral-7b-v0.1 @ 1048575: longest main-thread gap'] = Math.round(mistral.gap);
  assert.equal(mistral.clickedWhile, 'running', 'the click was handled during the run');
  assert.equal((await verdict(page)).text.includes(cli('mistral-7b-v0.1', 1048575).verdict), true);

  // Gemma 3 27B at 131072, for the timing table.
  await run(page, 'gemma-3-27b-it', 131072);
  measurements['gemma-3-27b-it @ 131072'] = Number((await verdict(page)).ms);
  assert.equal((await verdict(page)).text.includes(cli('gemma-3-27b-it', 131072).verdict), true);
  await shot(page, 'models-gemma3-27b-131072');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('a bad config.json, pasted or dropped, shows a message and keeps the previous report', async () => {
  const page = await openModels();
  const before = await verdict(page);
  const settings = await page.locator('#models-view').getAttribute('data-settings');
  await page.click('#model-paste summary');
  await page.fill('#model-paste-text', '{"model_type": "mistral", "sliding_window": ');
  await page.click('#model-paste-load');
  await page.waitForFunction(() => document.querySelector('#message.error')?.textContent
    .includes('could not read pasted config.json: config: malformed JSON'));
  assert.deepEqual(await verdict(page), before);
  assert.equal(await page.locator('#models-view').getAttribute('data-settings'), settings);
  const drop = async (name, text) => {
    const dt = await page.evaluateHandle(([name, text]) => {
      const dt = new DataTransfer();
      dt.items.add(new File([text], name, { type: 'application/json' }));
      return dt;
    }, [name, text]);
    await page.dispatchEvent('#models-view', 'drop', { dataTransfer: dt });
  };
  await drop('odd.json', '{"model_type": "no-such-model", "num_hidden_layers": 4}');
  await page.waitForFunction(() => document.querySelector('#message.error')?.textContent
    .includes('could not read odd.json: model_type: unknown model type "no-such-model"'));
  assert.deepEqual(await verdict(page), before);
  await shot(page, 'models-bad-config');
  // A context over the browser's limit is refused too.
  await page.fill('#model-n', '2000000');
  await page.locator('#model-n').dispatchEvent('change');
  await page.waitForFunction(() => document.querySelector('#message.error')?.textContent.includes('more than the 1048576'));
  assert.equal(await page.locator('#models-view').getAttribute('data-settings'), settings);
  // A good config dropped replaces the model.
  await drop('tiny.json', '{"model_type": "mistral", "num_hidden_layers": 6, "sliding_window": 1000}');
  await page.waitForFunction(() => document.querySelector('#model-verdict')?.textContent.includes('tiny.json'), null, { timeout: 60000 });
  await done(page);
  assert.match(await page.locator('#model-pattern').innerText(), /6 layers: 6 x sliding_attention\(1000\)/);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('"Open a scaled copy" opens the model at 512 positions in the editor, with its layer stack', async () => {
  const page = await openModels();
  await run(page, 'mistral-7b-v0.1', 131072);
  assert.match(await page.locator('#model-scale').innerText(), /scaled 1:256: context 131072 → 512, window 4096 → 16/);
  await page.click('#model-open-scaled');
  await page.waitForFunction(() => document.querySelector('#tab-editor')?.getAttribute('aria-selected') === 'true');
  await waitStat(page, 'n', 512);
  assert.match(await page.locator('#message').innerText(), /scaled 1:256/);
  // Causal window 16: every row reads 16 keys (fewer at the start).
  assert.equal(await page.locator('#stat-entries').innerText(), String(512 * 16 - (15 * 16) / 2));
  await page.click('#side-flow');
  assert.match(await page.locator('.flow-stack').innerText(), /32-layer stack/);
  await shot(page, 'models-scaled-copy-editor');
  // One undo step brings the previous document back.
  await page.keyboard.press('Control+z');
  await waitStat(page, 'n', 8);
  assert.deepEqual(page.errors, []);
  await page.close();
});
