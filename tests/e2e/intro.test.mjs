// The first-visit introduction: it explains the views, and each tour button loads its example
// through the app's ordinary actions (a preset, a derivation, the Flow view); closing it is
// remembered across reloads, and the header's Tour button brings it back. Screenshots:
// target/e2e-artifacts/intro-*.png.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { flowDone, openFresh, servedApp, shot, stat, waitStat } from './support.mjs';

const app = servedApp();

test('first visit: the introduction is shown beside the grid and its tour loads each example', async () => {
  const page = await openFresh(app.context, app.server.base);
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.waitForSelector('#intro');
  const box = await page.locator('#intro').boundingBox();
  await shot(page, 'intro-first-visit');
  assert.ok(box.y + box.height <= 900, `the introduction fits the first screen: ${JSON.stringify(box)}`);
  assert.match(await page.locator('#intro').innerText(), /Order[\s\S]*Flow[\s\S]*Designer[\s\S]*Models/);
  await shot(page, 'intro-first-visit');

  // Convergence: the window reaches the causal chain later.
  await page.click('#tour-window');
  await waitStat(page, 'n', 16);
  assert.equal(await stat(page, 'depth'), '5');
  assert.equal(await stat(page, 'classes'), '16');
  await page.click('#tour-causal');
  await waitStat(page, 'n', 8);
  assert.equal(await stat(page, 'depth'), '1');
  assert.equal(await stat(page, 'edges'), '7');

  // The derivations open in the Designer.
  await page.click('#tour-two-stream');
  await page.waitForFunction(() => document.querySelector('#design-family')?.textContent === 'block generation n=6 s=2');
  assert.equal(await page.locator('#tab-designer').getAttribute('aria-selected'), 'true');
  await page.waitForSelector('#merged-hasse .node');
  await shot(page, 'intro-tour-two-stream');
  await page.click('#tab-editor');
  await page.click('#tour-butterfly');
  await page.waitForFunction(() => document.querySelector('#design-family')?.textContent === 'butterfly n=4');
  await page.click('#tab-editor');

  // The flow agrees with R(L).
  await page.click('#tour-flow');
  await flowDone(page);
  await waitStat(page, 'n', 16);
  const agreement = await page.locator('#flow-agreement').evaluate((e) => ({ ...e.dataset }));
  assert.equal(agreement.layer, '2');
  assert.equal(Number(agreement.agreement), 1);
  await shot(page, 'intro-tour-flow');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('closing the introduction is remembered; Tour opens it again', async () => {
  const page = await openFresh(app.context, app.server.base);
  await page.waitForSelector('#intro');
  assert.equal(await page.locator('#intro-open').count(), 0);
  await page.click('#intro-close');
  await page.waitForSelector('#intro', { state: 'detached' });
  await page.reload();
  await page.waitForSelector('#grid');
  await page.waitForSelector('#intro-open');
  assert.equal(await page.locator('#intro').count(), 0);
  await page.click('#intro-open');
  await page.waitForSelector('#intro');
  await page.reload();
  await page.waitForSelector('#intro');
  await page.close();
});
