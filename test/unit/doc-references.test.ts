// What an operator reads in a message, a unit file or a compose file sends them to a page of the
// documentation, and often to a section of it: `(README, "Errors")`, `(docs/data.md, "Daily
// refresh")`. Each such pointer must lead to a page that exists and a heading it holds, or the
// reader is left searching for a section that was renamed or moved.

import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

/** Where pointers are written for operators and maintainers: what ships, and what runs it. */
const SOURCES = ['bin', 'scripts', 'deploy', 'src'];
const TOP_FILES = ['Dockerfile', ...fs.readdirSync(ROOT).filter((f) => /^docker-compose.*\.ya?ml$/.test(f))];

function walk(dir: string): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) return walk(rel);
    return /\.(ts|js|mjs|cjs|sh|ya?ml|service|timer|conf)$/.test(e.name) || e.name.endsWith('@.service') ? [rel] : [];
  });
}

/**
 * The file's text with comment leaders removed at line starts, so a quoted name broken over two comment lines
 * reads as one.
 */
function flattened(text: string): string {
  return text.replace(/\s*\n\s*(?:#|\/\/|\*(?!\/))?\s*/g, ' ');
}

/** A page's headings, outside fenced code blocks (where `# a shell comment` is not a heading). */
function headings(page: string): string[] {
  const text = fs.readFileSync(path.join(ROOT, page), 'utf8').replace(/^```[\s\S]*?^```/gm, '');
  return [...text.matchAll(/^#{1,6}\s+(.+?)\s*$/gm)].map((m) => m[1]);
}

interface Pointer {
  readonly file: string;
  readonly page: string;
  /** The section named, or undefined when the pointer is to the whole page. */
  readonly section: string | undefined;
  /** A section name that follows the page without quotes: ambiguous where it ends. */
  readonly unquoted: string | undefined;
}

function pointers(file: string): Pointer[] {
  const text = flattened(fs.readFileSync(path.join(ROOT, file), 'utf8'));
  const found: Pointer[] = [];
  for (const m of text.matchAll(/\b(README(?:\.md)?|docs\/[\w-]+\.md)(?:(?:,|:)\s*(?:"([^"]+)"|([A-Z][\w'-]*)))?/g)) {
    const page = m[1].startsWith('README') ? 'README.md' : m[1];
    found.push({ file, page, section: m[2], unquoted: m[3] });
  }
  return found;
}

const FILES = [...SOURCES.flatMap(walk), ...TOP_FILES.filter((f) => fs.existsSync(path.join(ROOT, f)))];
const ALL = FILES.flatMap(pointers);

describe('pointers to the documentation in messages, unit files and compose files', () => {
  it('finds the pointers it is meant to check (the test reads the files it names)', () => {
    const files = new Set(ALL.map((p) => p.file));
    for (const f of ['scripts/prepare.js', 'bin/reglookup.js', 'deploy/reglookup.service', 'docker-compose.yml']) {
      expect(files).toContain(f);
    }
    expect(ALL.filter((p) => p.section !== undefined).length).toBeGreaterThan(5);
  });

  it('each names a page that exists', () => {
    const missing = ALL.filter((p) => !fs.existsSync(path.join(ROOT, p.page))).map((p) => `${p.file}: ${p.page}`);
    expect(missing).toEqual([]);
  });

  it('each section named is a heading of that page', () => {
    const wrong = ALL.filter((p) => p.section !== undefined && fs.existsSync(path.join(ROOT, p.page)))
      .filter((p) => !headings(p.page).includes(p.section!))
      .map((p) => `${p.file}: ${p.page}, "${p.section}"`);
    expect(wrong).toEqual([]);
  });

  it('each section is named in quotes, so that where its name ends is not a guess', () => {
    const bare = ALL.filter((p) => p.unquoted !== undefined).map((p) => `${p.file}: ${p.page}, ${p.unquoted}`);
    expect(bare).toEqual([]);
  });

  it('the headings the pointers are checked against are read from the pages (a known one is found)', () => {
    // docs/operating.md's section on installing without Docker, named by hand here.
    expect(headings('docs/operating.md')).toContain('Production install without Docker');
    expect(headings('docs/scaling.md')).not.toContain('import a file from the host');
  });
});
