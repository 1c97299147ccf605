#!/usr/bin/env node
// Prints the one closing line CI reads: jest's counts plus the deployment checks, with each
// failed check step (build, lint, …) counted as a failure.
// Usage: summarize-tests.js JEST_REPORT DEPLOY_PASSED DEPLOY_FAILED [FAILED_STEP...]
const fs = require('node:fs');
const [report, deployPassed, deployFailed, ...failedSteps] = process.argv.slice(2);
let passed = Number(deployPassed) || 0;
let failed = (Number(deployFailed) || 0) + failedSteps.length;
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
