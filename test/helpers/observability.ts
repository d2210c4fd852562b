// What the observability tests share: the rules and the dashboard as they ship in deploy/, read as
// data (YAML through PyYAML, which docker-compose brings; JSON).

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
export const RULES_FILE = path.join(ROOT, 'deploy', 'prometheus', 'reglookup-rules.yml');

export interface Rule {
  readonly alert?: string;
  readonly record?: string;
  readonly expr: string;
  readonly for?: string;
  readonly labels?: Record<string, string>;
  readonly annotations?: Record<string, string>;
}

/** A YAML file as JSON. */
export function yamlFile(file: string): unknown {
  const r = spawnSync(
    'python3',
    ['-c', 'import sys, json, yaml; json.dump(yaml.safe_load(open(sys.argv[1])), sys.stdout)', file],
    { encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`cannot read ${file}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

/** Every rule of a rules file, recording and alerting, in file order. */
export function rulesOf(file = RULES_FILE): Rule[] {
  return (yamlFile(file) as { groups: { rules: Rule[] }[] }).groups.flatMap((g) => g.rules);
}

export const DASHBOARD_FILE = path.join(ROOT, 'deploy', 'grafana', 'dashboards', 'reglookup.json');

/** One label matcher of a series selector: `transport=~"get|post"`. */
export interface Matcher {
  readonly label: string;
  readonly op: '=' | '!=' | '=~' | '!~';
  readonly value: string;
}

/** A series selector of a query: a metric name and its matchers. */
export interface Selector {
  readonly name: string;
  readonly matchers: readonly Matcher[];
}

const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'inf', 'nan']);
const MATCHER_RE = /([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"/g;

/**
 * The series selectors a PromQL expression names, found without a parser: range and subquery
 * brackets and grouping clauses (by, without, on, ignoring, group_left, group_right) are dropped, then
 * every identifier that is not a function call or a keyword is a metric name, with the matchers in
 * the braces after it. Grafana's variables are kept in matcher values (the caller skips those).
 */
export function selectorsOf(expr: string): Selector[] {
  const text = expr
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const out: Selector[] = [];
  const re = /([a-zA-Z_:][a-zA-Z0-9_:]*)?\s*(\{[^}]*\})?/g;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    const [, name, braces] = m;
    if (m[0] === '') re.lastIndex++;
    if (name === undefined && braces === undefined) continue;
    if (name === undefined) throw new Error(`a selector without a metric name in: ${expr}`);
    const next = text.slice(re.lastIndex).trimStart();
    if (braces === undefined && (next.startsWith('(') || KEYWORDS.has(name.toLowerCase()))) continue;
    const matchers = [...(braces ?? '').matchAll(MATCHER_RE)].map((x) => ({
      label: x[1],
      op: x[2] as Matcher['op'],
      value: x[3],
    }));
    out.push({ name, matchers });
  }
  return out;
}

/** Every PromQL query of the dashboard: each panel's targets and each query variable's. */
export function dashboardQueries(file = DASHBOARD_FILE): { where: string; expr: string }[] {
  interface Panel {
    readonly title: string;
    readonly targets?: { readonly expr: string }[];
    readonly panels?: Panel[];
  }
  const d = JSON.parse(fs.readFileSync(file, 'utf8')) as {
    panels: Panel[];
    templating: { list: { name: string; query: string | { query: string } }[] };
  };
  const out: { where: string; expr: string }[] = [];
  const visit = (p: Panel) => {
    for (const t of p.targets ?? []) out.push({ where: `panel "${p.title}"`, expr: t.expr });
    for (const c of p.panels ?? []) visit(c);
  };
  d.panels.forEach(visit);
  for (const v of d.templating.list) {
    const q = typeof v.query === 'string' ? v.query : v.query.query;
    // Grafana's label_values(selector, label): the selector is PromQL, the label is a label's name.
    const lv = /^label_values\((.*),\s*([a-zA-Z_][a-zA-Z0-9_]*)\)$/.exec(q);
    out.push({ where: `variable $${v.name}`, expr: lv ? lv[1] : q });
  }
  return out;
}

/** A Prometheus text scrape as samples: each metric name with the label sets it has. */
export function scrapeOf(text: string): Map<string, Record<string, string>[]> {
  const out = new Map<string, Record<string, string>[]>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? /.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[3] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
    const list = out.get(m[1]) ?? [];
    list.push(labels);
    out.set(m[1], list);
  }
  return out;
}
