// The compose file's monitoring profile and the files it mounts, checked without a Docker engine:
// `docker-compose config` of the profile, `promtool check config` of Prometheus's configuration, and
// the Grafana provisioning and dashboard as Grafana reads them (the data source's uid, the folder the
// dashboards are loaded from). The dashboard has the panels issue 46 lists. That each query names a
// series the service exposes is test/deploy/series.test.ts.

import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { DASHBOARD_FILE, dashboardQueries, selectorsOf, yamlFile } from '../helpers/observability';

const ROOT = path.resolve(__dirname, '../..');
const ci = process.env.CI === 'true';
const have = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;
function describeIf(tool: string, pkg: string, name: string, fn: () => void): void {
  if (!have(tool) && !ci) process.stderr.write(`${name}: skipped, ${tool} is not installed (Debian package ${pkg})\n`);
  (have(tool) || ci ? describe : describe.skip)(name, fn);
}

interface Service {
  image?: string;
  profiles?: string[];
  volumes?: string[];
  ports?: (string | { host_ip?: string; published: string | number; target: number })[];
  command?: string[];
  healthcheck?: { test: string[] };
}

function composeWithMonitoring(): Record<string, Service> {
  const yaml = execFileSync(
    'docker-compose',
    ['-f', path.join(ROOT, 'docker-compose.yml'), '--profile', 'monitoring', 'config'],
    {
      cwd: ROOT,
      encoding: 'utf8',
    },
  );
  const json = execFileSync(
    'python3',
    ['-c', 'import sys, json, yaml; json.dump(yaml.safe_load(sys.stdin), sys.stdout)'],
    {
      input: yaml,
      encoding: 'utf8',
    },
  );
  return (JSON.parse(json) as { services: Record<string, Service> }).services;
}

/** Where a file or folder of the repository is mounted in a service, or undefined. */
function mountOf(svc: Service, repoPath: string): string | undefined {
  const source = path.join(ROOT, repoPath);
  return (svc.volumes ?? []).find((v) => v.split(':')[0] === source)?.split(':')[1];
}

/** Published on this host's loopback only (the compose file exposes nothing else of them). */
function loopbackOnly(svc: Service): boolean {
  return (svc.ports ?? []).every((p) =>
    typeof p === 'string' ? p.startsWith('127.0.0.1:') : p.host_ip === '127.0.0.1',
  );
}

describeIf('docker-compose', 'docker-compose', 'docker compose --profile monitoring', () => {
  let services: Record<string, Service>;
  beforeAll(() => {
    services = composeWithMonitoring();
  });

  test('Prometheus and Grafana, in the monitoring profile only, published on the loopback only', () => {
    for (const name of ['prometheus', 'grafana']) {
      expect(services[name].profiles).toEqual(['monitoring']);
      expect(services[name].ports?.length).toBeGreaterThan(0);
      expect(loopbackOnly(services[name])).toBe(true);
    }
    expect(services.prometheus.image).toMatch(/^prom\/prometheus:v\d/);
    expect(services.grafana.image).toMatch(/^grafana\/grafana:\d/);
  });

  test("Prometheus reads the repository's configuration and rules, side by side as the configuration names them", () => {
    const prom = services.prometheus;
    const config = mountOf(prom, 'deploy/prometheus/prometheus.yml');
    const rules = mountOf(prom, 'deploy/prometheus/reglookup-rules.yml');
    expect(config).toBeDefined();
    expect(prom.command).toContain(`--config.file=${config}`);
    const named = (yamlFile(path.join(ROOT, 'deploy/prometheus/prometheus.yml')) as { rule_files: string[] })
      .rule_files;
    expect(named.map((f) => path.posix.join(path.posix.dirname(config!), f))).toEqual([rules]);
  });

  test('it scrapes every replica of the reglookup service on the port the service listens on', () => {
    const conf = yamlFile(path.join(ROOT, 'deploy/prometheus/prometheus.yml')) as {
      scrape_configs: { job_name: string; dns_sd_configs?: { names: string[]; type: string; port: number }[] }[];
    };
    const job = conf.scrape_configs.find((j) => j.job_name === 'reglookup');
    // A DNS lookup of the service name answers every replica's address; the replicas' own health
    // check says which port they serve (and /metrics is on it: no METRICS_PORT in the compose file).
    const sd = job?.dns_sd_configs?.[0];
    expect(sd?.names).toEqual(['reglookup']);
    expect(sd?.type).toBe('A');
    expect(services.reglookup.healthcheck?.test.join(' ')).toContain(`127.0.0.1:${sd?.port}/`);
    expect(JSON.stringify(services.reglookup)).not.toContain('METRICS_PORT');
  });

  test("Grafana is given the provisioning folder and the dashboards folder the provisioning names, and the data source is the profile's Prometheus", () => {
    const g = services.grafana;
    const provisioning = mountOf(g, 'deploy/grafana/provisioning');
    expect(provisioning).toBe('/etc/grafana/provisioning');
    const providers = (
      yamlFile(path.join(ROOT, 'deploy/grafana/provisioning/dashboards/reglookup.yml')) as {
        providers: { options: { path: string } }[];
      }
    ).providers;
    expect(providers.map((p) => p.options.path)).toEqual([mountOf(g, 'deploy/grafana/dashboards')]);
    const ds = (
      yamlFile(path.join(ROOT, 'deploy/grafana/provisioning/datasources/prometheus.yml')) as {
        datasources: { uid: string; type: string; url: string }[];
      }
    ).datasources;
    expect(ds).toHaveLength(1);
    expect(ds[0].type).toBe('prometheus');
    expect(ds[0].url).toBe('http://prometheus:9090');
    expect(
      services.prometheus.ports?.some((p) => (typeof p === 'string' ? /:9090(\/tcp)?$/.test(p) : p.target === 9090)),
    ).toBe(true);
  });
});

promtoolCheck();
function promtoolCheck(): void {
  describeIf('promtool', 'prometheus', 'promtool check config', () => {
    test("the compose profile's Prometheus configuration is valid, its rules with it", () => {
      const r = spawnSync('promtool', ['check', 'config', 'prometheus.yml'], {
        cwd: path.join(ROOT, 'deploy', 'prometheus'),
        encoding: 'utf8',
      });
      expect(`${r.stdout}${r.stderr}`).toMatch(/SUCCESS: 1 rule files found/);
      expect(r.status).toBe(0);
    });
  });
}

describe('the dashboard', () => {
  interface Panel {
    type: string;
    title: string;
    datasource?: { uid: string };
    targets?: { datasource?: { uid: string }; expr: string }[];
    gridPos: { x: number; y: number; w: number; h: number };
  }
  const dash = JSON.parse(fs.readFileSync(DASHBOARD_FILE, 'utf8')) as { uid: string; panels: Panel[] };
  const uid = (
    yamlFile(path.join(ROOT, 'deploy/grafana/provisioning/datasources/prometheus.yml')) as {
      datasources: { uid: string }[];
    }
  ).datasources[0].uid;
  const queries = dashboardQueries();

  test('every panel queries the provisioned data source and fits the 24-column grid', () => {
    for (const p of dash.panels.filter((x) => x.type !== 'row')) {
      expect([p.title, p.datasource?.uid]).toEqual([p.title, uid]);
      for (const t of p.targets ?? []) expect([p.title, t.datasource?.uid]).toEqual([p.title, uid]);
      expect(p.targets?.length).toBeGreaterThan(0);
      expect(p.gridPos.x + p.gridPos.w).toBeLessThanOrEqual(24);
    }
  });

  test('no two panels overlap', () => {
    const cells = new Set<string>();
    for (const p of dash.panels)
      for (let x = p.gridPos.x; x < p.gridPos.x + p.gridPos.w; x++)
        for (let y = p.gridPos.y; y < p.gridPos.y + p.gridPos.h; y++) {
          expect(cells.has(`${x},${y}`) ? p.title : null).toBeNull();
          cells.add(`${x},${y}`);
        }
  });

  /** Whether some query names this metric and matches this pattern. */
  const some = (metric: string, re: RegExp = /./) =>
    queries.some((q) => selectorsOf(q.expr).some((s) => s.name === metric) && re.test(q.expr));

  test.each([
    ['traffic by transport', 'reglookup_requests_total', /by \(transport\)/],
    ['traffic by operation', 'reglookup_requests_total', /by \(operation\)/],
    ['latency p50', 'reglookup_request_duration_seconds_bucket', /histogram_quantile\(0\.5,/],
    ['latency p99', 'reglookup_request_duration_seconds_bucket', /histogram_quantile\(0\.99,/],
    ['refusals by code', 'reglookup_refusals_total', /by \(code\)/],
    ['store health', 'reglookup_store_up', /./],
    ['replica health', 'reglookup_store_replica_up', /./],
    ['upstream calls', 'reglookup_upstream_calls_total', /by \(provider, outcome\)/],
    ['cache hit ratio', 'reglookup_upstream_cache_total', /result="hit".*\/ sum/],
    ['breaker state per provider', 'reglookup_upstream_breaker_state', /by \(provider, state\)/],
    ['credits spent per hour', 'reglookup_credits_spent_total', /increase\([^)]*\[1h\]\)/],
  ])('a panel for %s', (_what, metric, re) => {
    expect(some(metric, re)).toBe(true);
  });
});
