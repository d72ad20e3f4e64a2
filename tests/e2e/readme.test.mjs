// Regenerates the README's screenshots (docs/screenshots/*.png) from the built app at 1440x900, so
// they show what the app shows today: the editor, the designer, the Flow view and the Models view.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { flowDone, loadPreset, openFresh, ROOT, servedApp } from './support.mjs';

const OUT = path.join(ROOT, 'docs', 'screenshots');
mkdirSync(OUT, { recursive: true });
const app = servedApp();

async function open() {
  const page = await openFresh(app.context, app.server.base);
  await page.setViewportSize({ width: 1440, height: 900 });
  return page;
}

async function save(page, name) {
  const file = path.join(OUT, `${name}.png`);
  await page.screenshot({ path: file });
  assert.ok(statSync(file).size > 20000, `${name}.png looks empty`);
  assert.deepEqual(page.errors, [], 'no page errors');
}

test('README screenshot: the editor on Block Two-Stream', async () => {
  const page = await open();
  await loadPreset(page, 'block-two-stream', 6);
  await page.waitForSelector('#hasse');
  await save(page, 'editor');
  await page.close();
});

test('README screenshot: the designer deriving Butterfly', async () => {
  const page = await open();
  await page.click('#tab-designer');
  await page.waitForSelector('#designer');
  await page.selectOption('#family', 'butterfly');
  await page.fill('#family-n', '4');
  await page.locator('#family-n').dispatchEvent('change');
  await page.click('#derive');
  await page.waitForFunction(() => document.querySelector('#design-family')?.textContent.includes('butterfly')
    && document.querySelector('#derived-dense'));
  await save(page, 'designer');
  await page.close();
});

test('README screenshot: the Flow view on a sliding window', async () => {
  const page = await open();
  await loadPreset(page, 'sliding-window', 16, { w: 3 });
  await page.click('#side-flow');
  await flowDone(page);
  await save(page, 'flow');
  await page.close();
});

test('README screenshot: the Models view on Llama 4 Scout at 1M tokens', async () => {
  const page = await open();
  await page.click('#tab-models');
  await page.selectOption('#model-gallery', 'llama-4-scout-17b-16e');
  await page.fill('#model-n', '1048576');
  await page.locator('#model-n').dispatchEvent('change');
  await page.waitForFunction(() => document.querySelector('#models-view')?.dataset.state === 'done'
    && document.querySelector('#model-verdict')?.dataset.n === '1048576', null, { timeout: 120000 });
  await save(page, 'models');
  await page.close();
});
