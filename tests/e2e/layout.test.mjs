// The page at a glance: at 1440x900 and 1920x1080, in both themes, the Editor shows the grid,
// the layer control and the order diagram (or the Flow maps) together without scrolling; the
// diagram is fitted (every node inside the drawing) on load and after a change unless the user
// zoomed; a message takes its reserved line and never covers content. The Designer and Models
// views are checked the same way. Assertions are on bounding boxes; screenshots go to
// target/e2e-artifacts/layout-*.png.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { flowDone, loadPreset, openFresh, servedApp, shot } from './support.mjs';

const app = servedApp();

const SIZES = [
  [1440, 900],
  [1920, 1080],
];
const THEMES = ['light', 'dark'];

/** The page-space box of `selector` (the first match), or a failure naming it. */
async function box(page, selector) {
  const b = await page.locator(selector).first().boundingBox();
  assert.ok(b, `${selector} is not rendered`);
  return b;
}

/** Asserts that `selector` lies entirely inside the viewport, unscrolled. */
async function assertVisible(page, selector, label) {
  const scroll = await page.evaluate(() => [window.scrollX, window.scrollY]);
  assert.deepEqual(scroll, [0, 0], 'the page is not scrolled');
  const { width, height } = page.viewportSize();
  const b = await box(page, selector);
  const inside = b.x >= 0 && b.y >= 0 && b.x + b.width <= width + 0.5 && b.y + b.height <= height + 0.5;
  assert.ok(inside, `${label}: ${selector} at ${JSON.stringify(b)} is not inside the ${width}x${height} viewport`);
}

function intersects(a, b) {
  return a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
}

/** Asserts that the message box overlaps none of `selectors`. */
async function assertMessageClear(page, selectors, label) {
  const m = await box(page, '#message');
  for (const s of selectors) {
    const b = await box(page, s);
    assert.ok(!intersects(m, b), `${label}: #message ${JSON.stringify(m)} covers ${s} ${JSON.stringify(b)}`);
  }
}

/** Every node of the diagram `svg` lies inside the drawing (the diagram is fitted). */
async function assertFitted(page, svg, label) {
  const out = await page.locator(svg).evaluate((el) => {
    const frame = el.getBoundingClientRect();
    const nodes = [...el.querySelectorAll('.node')];
    const outside = nodes
      .map((n) => ({ n: n.dataset.class, r: n.getBoundingClientRect() }))
      .filter(({ r }) => r.left < frame.left - 0.5 || r.right > frame.right + 0.5 || r.top < frame.top - 0.5 || r.bottom > frame.bottom + 0.5)
      .map(({ n }) => n);
    return { count: nodes.length, outside };
  });
  assert.ok(out.count > 0, `${label}: the diagram has nodes`);
  assert.deepEqual(out.outside, [], `${label}: classes drawn outside the diagram`);
}

/** The Models view's per-layer table is whole: no column cut at its right edge (it scrolls only
 * down), and its panel ends inside the viewport's width. */
async function assertTableWhole(page, label) {
  const t = await page.locator('#model-layers-table').evaluate((table) => {
    const scroll = table.closest('.table-scroll');
    const panel = table.closest('section').getBoundingClientRect();
    return { table: table.scrollWidth, visible: scroll.clientWidth, right: panel.right, page: document.documentElement.clientWidth };
  });
  assert.ok(t.table <= t.visible, `${label}: the per-layer table is ${t.table} px wide in ${t.visible} px`);
  assert.ok(t.right <= t.page + 0.5, `${label}: the per-layer panel ends at ${t.right} px of ${t.page}`);
}

async function setTheme(page, theme) {
  if ((await page.evaluate(() => document.documentElement.dataset.theme)) !== theme) await page.click('#theme');
  await page.waitForFunction((t) => document.documentElement.dataset.theme === t, theme);
}

for (const [width, height] of SIZES) {
  for (const theme of THEMES) {
    const tag = `${width}x${height}-${theme}`;

    test(`editor at ${tag}: grid, layer control and fitted diagram (or the Flow maps) at a glance; messages cover nothing`, async () => {
      const page = await openFresh(app.context, app.server.base);
      await page.setViewportSize({ width, height });
      await setTheme(page, theme);
      const glance = ['#grid', 'section.layers', '#layer'];
      for (const s of [...glance, '#hasse']) await assertVisible(page, s, `default mask ${tag}`);
      await assertFitted(page, '#hasse', `default mask ${tag}`);
      await shot(page, `layout-editor-${tag}`);
      // A preset load leaves a message; the diagram of block-two-stream is fitted too.
      await loadPreset(page, 'block-two-stream', 8);
      for (const s of [...glance, '#hasse', '#message']) await assertVisible(page, s, `block-two-stream ${tag}`);
      await assertFitted(page, '#hasse', `block-two-stream ${tag}`);
      await assertMessageClear(page, [...glance, '#hasse'], `block-two-stream ${tag}`);
      await shot(page, `layout-editor-b2s-${tag}`);
      // The Flow maps beside the grid, a message shown with them.
      await page.click('#side-flow');
      await flowDone(page);
      await loadPreset(page, 'sliding-window', 12, { w: 3 });
      await flowDone(page);
      for (const s of [...glance, '#flow-heat', '#flow-reach', '#message']) await assertVisible(page, s, `flow ${tag}`);
      await assertMessageClear(page, [...glance, '.flow-maps'], `flow ${tag}`);
      await shot(page, `layout-flow-${tag}`);
      await page.close();
    });

    test(`designer and models at ${tag}: the main pictures in view, the message beside them`, async () => {
      const page = await openFresh(app.context, app.server.base);
      await page.setViewportSize({ width, height });
      await setTheme(page, theme);
      await page.click('#tab-designer');
      await page.click('#derive');
      await page.waitForSelector('#merged-hasse .node');
      await page.waitForSelector('#message');
      for (const s of ['#family', '#derive', '#design-report', '#merged-hasse', '#message']) await assertVisible(page, s, `designer ${tag}`);
      await assertMessageClear(page, ['#design-report', '#merged-hasse', '#derive'], `designer ${tag}`);
      await shot(page, `layout-designer-${tag}`);
      await page.click('#tab-models');
      await page.waitForFunction(() => document.querySelector('#models-view')?.dataset.state === 'done' && document.querySelector('#model-verdict'), null, {
        timeout: 120000,
      });
      for (const s of ['#model-gallery', '#model-verdict', '#model-heat', '#model-layer', '#model-plot']) await assertVisible(page, s, `models ${tag}`);
      // The designer's message stays in the designer (issue 31 saw "derived butterfly n=4: ..."
      // on the Models view).
      assert.equal(await page.locator('#message').count(), 0, `models ${tag}: the designer's message is gone`);
      await assertTableWhole(page, `models ${tag}`);
      await shot(page, `layout-models-${tag}`);
      // The widest figures: Mistral 7B at 1,048,576 (seven-digit lookbacks, every layer short).
      await page.selectOption('#model-gallery', 'mistral-7b-v0.1');
      await page.fill('#model-n', '1048576');
      await page.locator('#model-n').dispatchEvent('change');
      await page.waitForFunction(() => document.querySelector('#model-verdict')?.dataset.n === '1048576'
        && document.querySelector('#models-view')?.dataset.state === 'done', null, { timeout: 180000 });
      await assertTableWhole(page, `models mistral 1M ${tag}`);
      await shot(page, `layout-models-mistral-1m-${tag}`);
      await page.close();
    });
  }
}

test('the growth curve\'s labels fit beside its axes at 1440x900, the largest as a short count; the preset\'s boxes show their values beside their labels', async () => {
  const page = await openFresh(app.context, app.server.base);
  await page.setViewportSize({ width: 1440, height: 900 });
  // 512 positions, one class: |R(L*)| = 512² = 262,144 cells, a six-digit top that was cut to "144".
  await loadPreset(page, 'random', 512, { p: 0.0156, seed: 1 });
  await page.waitForFunction(() => document.querySelector('#stat-n')?.textContent === '512');
  const ticks = await page.locator('.growth svg').evaluate((svg) => {
    const frame = svg.getBoundingClientRect();
    return [...svg.querySelectorAll('text.tick')].map((t) => {
      const r = t.getBoundingClientRect();
      return { text: t.textContent, inside: r.left >= frame.left - 0.5 && r.right <= frame.right + 0.5 && r.top >= frame.top - 0.5 && r.bottom <= frame.bottom + 0.5 };
    });
  });
  assert.deepEqual(ticks.filter((t) => !t.inside), [], 'every label of the growth curve is inside its drawing');
  assert.ok(ticks.some((t) => t.text === '262k'), `the top of the axis reads 262k: ${JSON.stringify(ticks)}`);
  // The preset's p box shows its whole value (a 64-px box showed 0.0156 as "0.015").
  // So does a longer one (8 / 4096 to three figures), within its panel.
  const pBox = () => page.locator('#param-p').evaluate((e) => {
    const panel = e.closest('.param').getBoundingClientRect();
    const r = e.getBoundingClientRect();
    return { value: e.value, scroll: e.scrollWidth, client: e.clientWidth, inside: r.right <= panel.right + 0.5 };
  });
  for (const value of ['0.0156', '0.00195']) {
    if (value !== '0.0156') {
      await page.fill('#param-p', value);
      await page.locator('#param-p').dispatchEvent('change');
    }
    const p = await pBox();
    assert.equal(p.value, value);
    assert.ok(p.scroll <= p.client && p.inside, `the p box shows all of ${p.value}: ${JSON.stringify(p)}`);
  }
  // The preset's "n" stays on the line of its box.
  const n = await page.locator('#preset-n').evaluate((e) => {
    const range = document.createRange();
    const text = [...e.labels[0].childNodes].find((c) => c.nodeType === Node.TEXT_NODE && c.textContent.trim() === 'n');
    range.selectNodeContents(text);
    const [t, r] = [range.getBoundingClientRect(), e.getBoundingClientRect()];
    return { text: t.top + t.height / 2, box: r.top + r.height / 2, height: r.height };
  });
  assert.ok(Math.abs(n.text - n.box) < n.height / 2, `"n" beside its box: ${JSON.stringify(n)}`);
  await shot(page, 'layout-growth-random-512');
  await page.close();
});

test('the diagram keeps the user\'s zoom across changes; "all" fits it again', async () => {
  const page = await openFresh(app.context, app.server.base);
  await page.setViewportSize({ width: 1440, height: 900 });
  const viewBox = () => page.locator('#hasse').getAttribute('viewBox');
  await page.click('.order-wrap button[aria-label="Zoom in"]');
  await page.click('.order-wrap button[aria-label="Zoom in"]');
  const zoomed = await viewBox();
  await loadPreset(page, 'block-two-stream', 8);
  await page.waitForFunction(() => document.querySelectorAll('#hasse .node').length === 8);
  assert.equal(await viewBox(), zoomed, 'a change keeps the zoomed view');
  await page.click('.order-wrap button[aria-label="Show all of the diagram"]');
  await page.waitForFunction((z) => document.querySelector('#hasse').getAttribute('viewBox') !== z, zoomed);
  await assertFitted(page, '#hasse', 'after "all"');
  // Fitted again, so the next change is fitted too.
  await loadPreset(page, 'causal', 20);
  await page.waitForFunction(() => document.querySelectorAll('#hasse .node').length === 20);
  await assertFitted(page, '#hasse', 'causal n=20 after "all"');
  await page.close();
});
