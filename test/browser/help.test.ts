// The help pages in a real browser: Debian's Chromium driven by playwright-core. An integrator
// opens the service page, follows the link to an operation, fills in the test form with a README
// demo plate and invokes it, with JavaScript off (the pages run none), and reads the vehicle in the
// XML answer. axe-core checks the service page and an operation page for accessibility problems.
// Screenshots go to test/browser/.artifacts/ (git-ignored). No Chromium: the tests are skipped
// with a loud message, except under CI=true, where that is a failure.

import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { readmeDemo } from '../helpers/helppages';
import { SAMPLE } from '../helpers/sample';
import { startServer, type TestServer } from '../helpers/server';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARTIFACTS = path.resolve(__dirname, '.artifacts');
const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
];

jest.setTimeout(90_000);

/** The bundled sample record behind a README demo plate (the data file, not the service, says what the vehicle is). */
function sampleRecord(operation: string) {
  const fold = (s: string) => s.replace(/[\s.-]/g, '').toUpperCase();
  const plate = fold(readmeDemo(operation).registration);
  const r = SAMPLE.find((s) => s.operation === operation && fold(s.registration) === plate);
  if (!r) throw new Error(`no sample record for ${operation} ${plate}`);
  return r;
}

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string[] }>;
}

/**
 * Runs axe-core in the page. Injected through the DevTools protocol, which the page's CSP (no script-src) does not
 * govern.
 */
async function axe(page: Page): Promise<{ violations: AxeViolation[]; passes: number }> {
  await page.evaluate(fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8'));
  return page.evaluate(async () => {
    const w = globalThis as unknown as { axe: { run(): Promise<{ violations: AxeViolation[]; passes: unknown[] }> } };
    const r = await w.axe.run();
    return {
      violations: r.violations.map((v) => ({
        id: v.id,
        impact: v.impact,
        help: v.help,
        nodes: v.nodes.map((n) => ({ target: n.target })),
      })),
      passes: r.passes.length,
    };
  });
}

const IN_CI = /^(1|true|yes)$/i.test(process.env.CI ?? '');

/** describe() when Chromium is there; otherwise one failing test under CI, a loud skip elsewhere. */
function describeWithChromium(title: string, body: () => void): void {
  if (fs.existsSync(CHROMIUM)) return describe(title, body);
  const why = `${CHROMIUM} does not exist; install Debian's chromium package (apt-get install chromium) or set CHROMIUM_PATH`;
  if (IN_CI) {
    describe(title, () =>
      test('Chromium is installed (CI=true: a missing browser is a failure)', () => {
        throw new Error(why);
      }),
    );
    return;
  }
  const bar = '!'.repeat(78);
  console.warn(`\n${bar}\n!! SKIPPING the browser tests of the help pages: ${why}.\n${bar}\n`);
  describe.skip(title, body);
}

describeWithChromium('the help pages in Chromium', () => {
  let srv: TestServer;
  let browser: Browser;

  beforeAll(async () => {
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    srv = await startServer();
    // launch() starts Chromium on a fresh temporary profile (user-data-dir) and removes it on close.
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
  });
  afterAll(async () => {
    await browser?.close();
    await srv?.close();
  });

  /** Service page -> the operation's link -> its form, filled -> Invoke; returns the text the browser shows. */
  async function invokeFromServicePage(operation: string, values: Record<string, string>): Promise<string> {
    const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 1000, height: 900 } });
    try {
      const page = await context.newPage();
      await page.goto(`${srv.url}/api/reg.asmx`);
      await page.screenshot({ path: path.join(ARTIFACTS, 'service.png'), fullPage: true });
      await page.getByRole('link', { name: operation, exact: true }).click();
      await page.waitForURL(`**/api/reg.asmx?op=${operation}`);
      await expectHeading(page, operation);
      for (const [label, value] of Object.entries(values)) await page.getByLabel(label, { exact: true }).fill(value);
      await page.screenshot({ path: path.join(ARTIFACTS, `${operation}-form.png`), fullPage: true });
      await Promise.all([
        page.waitForURL(`**/api/reg.asmx/${operation}`),
        page.getByRole('button', { name: 'Invoke' }).click(),
      ]);
      await page.screenshot({ path: path.join(ARTIFACTS, `${operation}-answer.png`) });
      return await page.locator('body').innerText();
    } finally {
      await context.close();
    }
  }

  async function expectHeading(page: Page, name: string): Promise<void> {
    expect(await page.getByRole('heading', { level: 2, name, exact: true }).count()).toBe(1);
  }

  test('CheckUSA: from the service page, through the test form with a demo plate and state, to the vehicle in the XML answer', async () => {
    const demo = readmeDemo('CheckUSA');
    const shown = await invokeFromServicePage('CheckUSA', {
      RegistrationNumber: demo.registration,
      State: demo.state!.value,
      username: 'demo',
    });
    const vehicle = sampleRecord('CheckUSA').vehicle as { Description: string; VehicleIdentificationNumber: string };
    expect(shown).toContain('<Vehicle xmlns:xsi=');
    expect(shown).toContain(`<Description>${vehicle.Description}</Description>`);
    expect(shown).toContain(vehicle.VehicleIdentificationNumber);
  });

  test('UKMOT: the same, to the MOT tests in the XML answer', async () => {
    const shown = await invokeFromServicePage('UKMOT', {
      RegistrationNumber: readmeDemo('UKMOT').registration,
      username: 'demo',
    });
    const mot = sampleRecord('UKMOT').mot as { tests: Array<{ TestNumber: string }> };
    expect(shown).toContain('<UKMOTData xmlns:xsi=');
    for (const t of mot.tests) expect(shown).toContain(`<TestNumber>${t.TestNumber}</TestNumber>`);
  });

  test('axe-core finds no accessibility violations on the service page, an operation page and the unknown-operation page', async () => {
    const context = await browser.newContext({ viewport: { width: 1000, height: 900 } });
    try {
      const page = await context.newPage();
      for (const url of ['/api/reg.asmx', '/api/reg.asmx?op=CheckUSA', '/api/reg.asmx?op=checkusa']) {
        await page.goto(srv.url + url);
        const r = await axe(page);
        expect(r.violations).toEqual([]);
        expect(r.passes).toBeGreaterThan(10);
      }
    } finally {
      await context.close();
    }
  });

  test('in a narrow window the pages do not scroll sideways (only the sample boxes do) and the form is usable', async () => {
    // README's screenshot (docs/help-checkusa.png) is CheckUSA-narrow.png, reduced to 64 colours.
    const context = await browser.newContext({ viewport: { width: 360, height: 900 }, deviceScaleFactor: 1 });
    try {
      const page = await context.newPage();
      for (const [url, shot] of [
        ['/api/reg.asmx', 'service-narrow.png'],
        ['/api/reg.asmx?op=CheckUSA', 'CheckUSA-narrow.png'],
      ]) {
        await page.goto(srv.url + url);
        if (url.includes('op=')) {
          const demo = readmeDemo('CheckUSA');
          await page.getByLabel('RegistrationNumber', { exact: true }).fill(demo.registration);
          await page.getByLabel('State', { exact: true }).fill(demo.state!.value);
          await page.getByLabel('username', { exact: true }).fill('demo');
        }
        const widths = await page.evaluate<{ page: number; window: number }>(
          '({ page: document.documentElement.scrollWidth, window: window.innerWidth })',
        );
        expect(widths.page).toBeLessThanOrEqual(widths.window);
        await page.screenshot({ path: path.join(ARTIFACTS, shot) });
      }
      const input = await page.getByLabel('RegistrationNumber', { exact: true }).boundingBox();
      expect(input!.x + input!.width).toBeLessThanOrEqual(360);
    } finally {
      await context.close();
    }
  });
});
