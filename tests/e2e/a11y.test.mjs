// Accessibility: axe-core (tests/e2e/node_modules/axe-core, pinned in package.json) finds no
// violation, of any rule and impact, on every view (Editor with the order diagram and a refused
// paste, Editor with the Flow maps, Designer after a derivation, Models after a run) in the light and dark themes.
// axe's source is evaluated through the DevTools protocol (page.evaluate), which the page's CSP
// does not govern, so the CSP stays as shipped. A failure prints every violation and its nodes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { flowDone, loadPreset, openFresh, servedApp, shot } from './support.mjs';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

const app = servedApp();

/** Runs every axe rule on the page; returns the violations in a printable form. */
async function violations(page) {
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) await page.evaluate(AXE);
  const result = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
  return result.violations.map((v) => ({
    rule: v.id,
    impact: v.impact,
    help: v.help,
    nodes: v.nodes.map((n) => `${n.target.join(' ')}: ${n.failureSummary.replace(/\s+/g, ' ')}`),
  }));
}

/** Records the violations of one view under `label` in `found` (asserted at the end of a test,
 * so one run lists every view's violations). */
async function check(page, label, found) {
  const v = await violations(page);
  if (v.length) {
    console.log(`axe violations, ${label}:\n${JSON.stringify(v, null, 2)}`);
    found.push(...v.map((x) => `${label}: ${x.rule} (${x.impact}, ${x.nodes.length} nodes)`));
  }
}

async function setTheme(page, theme) {
  if ((await page.evaluate(() => document.documentElement.dataset.theme)) !== theme) await page.click('#theme');
  await page.waitForFunction((t) => document.documentElement.dataset.theme === t, theme);
}

for (const theme of ['light', 'dark']) {
  test(`axe-core: no violations on the Editor, Flow, Designer and Models views (${theme} theme)`, async () => {
    const page = await openFresh(app.context, app.server.base);
    const found = [];
    await page.setViewportSize({ width: 1440, height: 900 });
    await setTheme(page, theme);
    await check(page, `editor (${theme})`, found);
    // The paste box open, a refused text shown in place under it.
    await page.locator('#paste-import').evaluate((d) => {
      d.open = true;
    });
    await page.fill('#paste-text', 'def mask_mod(b, h, q_idx, kv_idx):\n    return MASK[q_idx, kv_idx]\n');
    await page.click('#paste-import-button');
    await page.waitForSelector('#paste-refusal');
    await check(page, `editor, paste refusal (${theme})`, found);
    // A message on screen, labels on the grid's rulers, the full order.
    await loadPreset(page, 'block-two-stream', 8);
    await page.click('#view-full');
    await page.waitForSelector('#hasse .edge.full');
    await check(page, `editor, block-two-stream, full order, message (${theme})`, found);
    await page.click('#side-flow');
    await flowDone(page);
    await check(page, `flow (${theme})`, found);
    await page.click('#tab-designer');
    await check(page, `designer before a derivation (${theme})`, found);
    await page.click('#derive');
    await page.waitForSelector('#merged-hasse .node');
    await check(page, `designer (${theme})`, found);
    await page.click('#tab-models');
    await page.waitForFunction(() => document.querySelector('#models-view')?.dataset.state === 'done' && document.querySelector('#model-verdict'), null, {
      timeout: 120000,
    });
    await check(page, `models (${theme})`, found);
    await shot(page, `a11y-models-${theme}`);
    await page.close();
    assert.deepEqual(found, [], 'axe-core violations (printed above)');
  });
}
