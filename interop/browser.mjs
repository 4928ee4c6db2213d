// browser.mjs: visits pages of a running agentnode with Debian's headless
// chromium (puppeteer-core) and prints what a person would see, as one JSON
// object on stdout; web_test.go decides whether that is right.
//
// Usage: node browser.mjs '<json>' where json is
//   {"chromium": "/usr/bin/chromium", "shots": "<dir for screenshots>",
//    "pages": [{"name": "directory", "url": "http://127.0.0.1:7447/"}, ...],
//    "widths": [390, 1280], "copy": true}
//
// For each page it reports the HTTP status, the title, the text, the ids of
// listed agents and definitions, the ownership badge and its evidence, the
// lessons' text (textContent) and how many elements each lesson holds,
// every console message and page error (a CSP violation is one), and
// whether a script injected into the page ran (window.__pwned), and it
// saves a full-page screenshot <shots>/<name>.png. With widths it also
// loads each page at each viewport width and reports how many pixels the
// page is wider than the screen (overflow, 0 when nothing scrolls
// sideways; <shots>/<name>-<width>.png). With copy it clicks the first
// copy button and reports what reached the clipboard.
import { join } from 'node:path';
import { withChromium } from './chromium.mjs';

const spec = JSON.parse(process.argv[2]);
const report = await withChromium(spec.chromium, async (browser) => {
  const out = {};
  for (const p of spec.pages) {
    out[p.name] = await visit(browser, p);
  }
  return out;
});
process.stdout.write(JSON.stringify(report) + '\n');

async function visit(browser, p) {
  const page = await browser.newPage();
  const messages = [];
  page.on('console', (m) => messages.push(`${m.type()}: ${m.text()}`));
  page.on('pageerror', (e) => messages.push(`pageerror: ${e.message}`));
  await page.setViewport({ width: 1280, height: 900 });
  const resp = await page.goto(p.url, { waitUntil: 'load' });
  const seen = await page.evaluate(read);
  await page.screenshot({ path: join(spec.shots, `${p.name}.png`), fullPage: true });
  const overflow = {};
  for (const w of spec.widths ?? []) {
    await page.setViewport({ width: w, height: 900 });
    await page.goto(p.url, { waitUntil: 'load' });
    overflow[w] = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    await page.screenshot({ path: join(spec.shots, `${p.name}-${w}.png`), fullPage: true });
  }
  const copied = spec.copy ? await copyFirst(page) : null;
  await page.close();
  return { status: resp.status(), csp: resp.headers()['content-security-policy'] ?? '', console: messages, overflow, copied, ...seen };
}

// copyFirst clicks the page's first visible copy button and returns
// {code, clipboard, label}: the code the button copies, what the
// clipboard holds afterwards and the button's label.
async function copyFirst(page) {
  const origin = new URL(page.url()).origin;
  await page.browserContext().overridePermissions(origin, ['clipboard-read', 'clipboard-write', 'clipboard-sanitized-write']);
  const button = await page.$('button.copy');
  if (!button || !(await button.isVisible())) return { code: '', clipboard: '', label: 'no visible copy button' };
  await button.click();
  await page.waitForFunction((b) => b.textContent !== 'copy', { timeout: 10000 }, button);
  return page.evaluate(async (b) => ({ code: b.dataset.copy, clipboard: await navigator.clipboard.readText(), label: b.textContent }), button);
}

// read runs in the page.
function read() {
  const all = (sel) => [...document.querySelectorAll(sel)];
  const badge = document.querySelector('#ownership');
  const evidence = (id) => {
    const e = document.getElementById(id);
    return e ? { present: e.dataset.present === 'true', text: e.textContent.trim() } : null;
  };
  return {
    title: document.title,
    text: document.body.innerText,
    pwned: window.__pwned ?? null,
    scripts: document.scripts.length,
    scriptSources: [...document.scripts].map((e) => e.getAttribute('src') ?? 'inline'),
    shares: all('.share').map((e) => ({ code: e.querySelector('button.copy')?.dataset.copy ?? '', href: e.querySelector('a.nostr')?.getAttribute('href') ?? '' })),
    comments: all('.comment').map((e) => e.querySelector('.comment-text')?.textContent ?? ''),
    agents: all('tr.agent').map((e) => e.dataset.agent),
    definitions: all('tr.definition').map((e) => e.dataset.definition),
    packages: all('tr.package').map((e) => e.textContent.trim()),
    ownership: badge ? { verified: badge.dataset.verified === 'true', text: badge.parentElement.textContent.trim() } : null,
    evidenceAgent: evidence('evidence-agent'),
    evidenceOwner: evidence('evidence-owner'),
    lessons: all('.lesson').map((e) => ({
      title: e.querySelector('h3')?.textContent ?? '',
      text: e.querySelector('.lesson-text')?.textContent ?? '',
      elements: e.querySelector('.lesson-text')?.children.length ?? -1,
      decision: e.nextElementSibling?.classList.contains('decision') ? e.nextElementSibling.textContent.trim() : '',
    })),
  };
}
