#!/usr/bin/env node
// Prints the one closing line CI reads, from jest's JSON report plus failed check steps.
const fs = require('node:fs');
const [report, ...failedSteps] = process.argv.slice(2);
let passed = 0;
let failed = failedSteps.length;
try {
  const r = JSON.parse(fs.readFileSync(report, 'utf8'));
  passed += r.numPassedTests;
  failed += r.numFailedTests + r.numRuntimeErrorTestSuites;
} catch {
  failed += 1;
  console.error('no jest report was written');
}
for (const s of failedSteps) console.error(`check failed: ${s}`);
console.log(`tests: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
