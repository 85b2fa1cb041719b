// Makes require('vscode') load the TEST DOUBLE (test/vscode_double.ts): there is no
// VS Code in CI. Import this before anything that imports 'vscode'.

import Module = require('module');

const moduleInternals = Module as unknown as {
  _resolveFilename(request: string, ...rest: unknown[]): string;
};
const resolve = moduleInternals._resolveFilename;
moduleInternals._resolveFilename = function (this: unknown, request: string, ...rest: unknown[]): string {
  if (request === 'vscode') return require.resolve('./vscode_double');
  return resolve.call(this, request, ...rest);
};
