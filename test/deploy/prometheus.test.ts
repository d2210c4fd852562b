// The alerting and recording rules in deploy/prometheus/ as Prometheus reads them: `promtool check
// rules` finds nothing wrong, `promtool test rules` passes (every alert fires on its series and stays
// quiet on the near misses), every alert says what to do and has its runbook section in
// docs/operating.md, and every alert the issue asks for is there. promtool is Debian's `prometheus`
// package (.ci/run installs it); without CI a missing promtool skips with a note.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RULES_FILE, rulesOf } from '../helpers/observability';

const ROOT = path.resolve(__dirname, '../..');
const DIR = path.join(ROOT, 'deploy', 'prometheus');
const RULES = RULES_FILE;
const ci = process.env.CI === 'true';
const havePromtool = spawnSync('sh', ['-c', 'command -v promtool']).status === 0;
if (!havePromtool && !ci) process.stderr.write('promtool: skipped, not installed (Debian package prometheus)\n');
const withPromtool = havePromtool || ci ? describe : describe.skip;

function promtool(...args: string[]): { status: number | null; out: string } {
  const r = spawnSync('promtool', args, { cwd: DIR, encoding: 'utf8' });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

withPromtool('promtool', () => {
  test('check rules: the rules file is valid', () => {
    const r = promtool('check', 'rules', 'reglookup-rules.yml');
    expect(r.out).toMatch(/SUCCESS/);
    expect(r.status).toBe(0);
  });

  test('test rules: each alert fires on its series and stays quiet on the near misses', () => {
    const r = promtool('test', 'rules', 'reglookup-rules.test.yml');
    expect(r.out).toMatch(/SUCCESS/);
    expect(r.status).toBe(0);
  });

  test('a rule that no longer fires as tested fails the tests (the tests can fail)', () => {
    // The store-down alert made to wait 10 minutes instead of 1: its test expects it firing at 5m.
    const copy = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-rules-'));
    try {
      const text = fs.readFileSync(RULES, 'utf8');
      const changed = text.replace(/(expr: reglookup_store_up == 0\n\s+for: )1m/, '$110m');
      expect(changed).not.toBe(text);
      fs.writeFileSync(path.join(copy, 'reglookup-rules.yml'), changed);
      fs.copyFileSync(path.join(DIR, 'reglookup-rules.test.yml'), path.join(copy, 'reglookup-rules.test.yml'));
      const r = spawnSync('promtool', ['test', 'rules', 'reglookup-rules.test.yml'], { cwd: copy, encoding: 'utf8' });
      expect(r.status).not.toBe(0);
      expect(`${r.stdout}${r.stderr}`).toMatch(/ReglookupStoreDown/);
    } finally {
      fs.rmSync(copy, { recursive: true, force: true });
    }
  });
});

describe('the alerts', () => {
  const alerts = rulesOf().filter((r) => r.alert !== undefined);
  const operating = fs.readFileSync(path.join(ROOT, 'docs', 'operating.md'), 'utf8');

  test('every alert the issue lists is there', () => {
    // Issue 46: store down, error ratio and p99 per transport, an upstream failing or its breaker
    // open, DVSA's daily quota and RegCheck's credits, callers with low credit, replicas degraded,
    // Redis degraded, an import failed, the process restarting.
    const names = alerts.map((a) => a.alert);
    for (const name of [
      'ReglookupStoreDown',
      'ReglookupHighErrorRatio',
      'ReglookupSlowLookups',
      'ReglookupUpstreamFailing',
      'ReglookupUpstreamBreakerOpen',
      'ReglookupDvsaQuotaNearlySpent',
      'ReglookupRegcheckCreditsLow',
      'ReglookupCallersLowCredit',
      'ReglookupReplicaDegraded',
      'ReglookupRedisDegraded',
      'ReglookupImportFailed',
      'ReglookupRestarting',
    ])
      expect(names).toContain(name);
  });

  test.each(alerts.map((a) => [a.alert as string, a]))(
    '%s: a severity, a summary, a description that points to its runbook section',
    (name, a) => {
      expect(['critical', 'warning', 'info']).toContain(a.labels?.severity);
      expect(a.annotations?.summary?.length).toBeGreaterThan(10);
      const anchor = name.toLowerCase();
      expect(a.annotations?.description).toContain(`Runbook: docs/operating.md#${anchor}`);
      // The runbook section: a heading named after the alert (GitHub makes its anchor from it).
      expect(operating).toMatch(new RegExp(`^### ${name}$`, 'm'));
    },
  );
});
