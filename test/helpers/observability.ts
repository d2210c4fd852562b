// What the observability tests share: the rules and the dashboard as they ship in deploy/, read as
// data (YAML through PyYAML, which docker-compose brings; JSON).

import { spawnSync } from 'node:child_process';
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
