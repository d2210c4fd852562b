// Reporter of `npm run faults`: before the run, an empty folder for the scenarios' records
// (scenario.ts); after it, one block per scenario (answered, charged, logged), then the plain
// closing line CI reads ("faults: N passed, N failed, N skipped").
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

class FaultSummary {
  constructor() {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reglookup-faults-'));
    process.env.FAULTS_SUMMARY_DIR = this.dir;
  }

  onRunComplete(_contexts, results) {
    const rows = fs
      .readdirSync(this.dir)
      .sort()
      .map((f) => JSON.parse(fs.readFileSync(path.join(this.dir, f), 'utf8')));
    const out = ['', 'Fault scenarios:'];
    for (const r of rows) {
      out.push(
        `- ${r.scenario}`,
        `    answered: ${r.answered}`,
        `    charged:  ${r.charged}`,
        `    logged:   ${r.logged}`,
      );
    }
    const skipped = results.numPendingTests + results.numTodoTests;
    out.push(`faults: ${results.numPassedTests} passed, ${results.numFailedTests} failed, ${skipped} skipped`, '');
    fs.rmSync(this.dir, { recursive: true, force: true });
    process.once('exit', () => process.stderr.write(out.join('\n')));
  }
}
module.exports = FaultSummary;
