// The TAP-like report of the offline deployment checks, which scripts/test.sh counts.

/** Collects named checks, each with the problems it found (none: passed). */
function createChecks() {
  const results = [];
  return {
    check(name, problems) {
      results.push({ name, problems });
    },
    /** Prints `ok` / `not ok` lines (problems indented) and exits 1 when any check failed. */
    report() {
      let failed = 0;
      for (const r of results) {
        if (r.problems.length === 0) console.log(`ok ${r.name}`);
        else {
          failed++;
          console.log(`not ok ${r.name}`);
          for (const p of r.problems) console.log(`    ${p}`);
        }
      }
      process.exit(failed > 0 ? 1 : 0);
    },
  };
}

module.exports = { createChecks };
