/** One jest run for the whole monorepo: unit/route tests beside each package, integration tests and the security suite (one file per class of attack) in test/. */
const transform = {
  '^.+\\.(t|j)sx?$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } }],
};
const common = { transform, testEnvironment: 'node', moduleFileExtensions: ['ts', 'js', 'json'] };

module.exports = {
  // Jest reads testTimeout only here, not per project: 30 s is generous for a 2-core machine under load; tests that
  // need longer say so themselves.
  testTimeout: 30000,
  // Test files run in a worker process, started afresh once its heap passes this after a file (it forces
  // workers even where jest would run in band, as on 2 cores). In band, the one process grew to 3 GB over
  // the suite: a CPU profile of a whole run put 190 s in its garbage collector and 67 s in spawning children
  // (each fork copies the parent's page tables), and in that run the in-process services of
  // test/integration/coordinator.test.ts missed a 500 ms health check (a pause of that process, most likely).
  // With this, the whole suite ran in 1530 s against 1952 s in band, on the same machine the same day.
  workerIdleMemoryLimit: '512MB',
  reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
  projects: [
    {
      ...common,
      displayName: 'unit',
      testMatch: ['<rootDir>/packages/*/test/**/*.test.ts', '<rootDir>/services/*/test/**/*.test.ts', '<rootDir>/test/static/**/*.test.ts'],
    },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts', '<rootDir>/test/security/**/*.test.ts'],
    },
  ],
};
