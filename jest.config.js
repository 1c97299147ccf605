/** Jest runs TypeScript sources directly through SWC; workspace packages map to their src. */
const swc = [
  '@swc/jest',
  { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } },
];
module.exports = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': swc },
  moduleNameMapper: {
    '^@outreach/(contracts|platform)$': '<rootDir>/packages/$1/src',
    '^@outreach/(contracts|platform)/(.*)$': '<rootDir>/packages/$1/src/$2',
    '^@outreach/(gateway|recipient-service|campaign-service|link-runtime)$': '<rootDir>/$1/src/server',
    '^@outreach/(gateway|recipient-service|campaign-service|link-runtime)/(.*)$': '<rootDir>/$1/src/$2',
  },
  testMatch: ['**/?(*.)test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  testTimeout: 30000,
};
