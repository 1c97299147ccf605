#!/usr/bin/env node
// Generates TypeScript types for protos/ into packages/contracts/src/generated.
// With --check, generates into a temporary folder and fails when the checked-in copy differs.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const outDir = path.join(root, 'packages/contracts/src/generated');
const check = process.argv.includes('--check');
const target = check ? fs.mkdtempSync(path.join(os.tmpdir(), 'protos-')) : outDir;
const files = ['outreach/v1/recipients.proto', 'outreach/v1/campaigns.proto', 'grpc/health/v1/health.proto'];

if (!check) fs.rmSync(outDir, { recursive: true, force: true });
execFileSync(
  path.join(root, 'node_modules/.bin/proto-loader-gen-types'),
  [
    ...files,
    '--longs=Number',
    '--enums=String',
    '--defaults',
    '--oneofs',
    '--grpcLib=@grpc/grpc-js',
    `--outDir=${target}`,
    '--includeDirs=.',
  ],
  // Run from protos/ with a relative include dir: the generated headers then name each proto
  // by its path in the repository, so the output is the same in every checkout.
  { stdio: 'inherit', cwd: path.join(root, 'protos') },
);

if (check) {
  const list = (dir) =>
    fs
      .readdirSync(dir, { recursive: true })
      .filter((f) => f.endsWith('.ts'))
      .sort();
  const a = list(target);
  const b = fs.existsSync(outDir) ? list(outDir) : [];
  const stale = a.filter(
    (f) =>
      !b.includes(f) ||
      fs.readFileSync(path.join(target, f), 'utf8') !== fs.readFileSync(path.join(outDir, f), 'utf8'),
  );
  const extra = b.filter((f) => !a.includes(f));
  if (stale.length || extra.length) {
    console.error(
      `Generated proto types are stale: ${[...stale, ...extra].join(', ')}. Run npm run gen:protos.`,
    );
    process.exit(1);
  }
  console.log('proto types are current');
}
