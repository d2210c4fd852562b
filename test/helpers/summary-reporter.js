// Prints one plain closing line after everything jest prints, "tests: N passed, N failed, N skipped",
// the form CI reads to know how many tests ran.
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const skipped = results.numPendingTests + results.numTodoTests;
    const line = `tests: ${results.numPassedTests} passed, ${results.numFailedTests} failed, ${skipped} skipped\n`;
    process.once('exit', () => process.stderr.write(line));
  }
}
module.exports = SummaryReporter;
