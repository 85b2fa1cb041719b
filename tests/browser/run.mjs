// Runs browser test files with node's test runner, or exits 77 (ctest: skipped) with
// the reason when what they need is missing: the trtwatch binary, Debian's chromium,
// or playwright-core (npm ci in tests/browser; scripts/setup.sh does it).
// Usage: node run.mjs FILE.test.mjs...
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const chromium = process.env.TRTWATCH_CHROMIUM || "/usr/bin/chromium";
const missing = [];
if (!process.env.TRTWATCH_BIN || !existsSync(process.env.TRTWATCH_BIN)) missing.push("TRTWATCH_BIN (the trtwatch binary)");
if (!existsSync(chromium)) missing.push(`${chromium} (apt-get install chromium)`);
if (!existsSync(join(here, "node_modules", "playwright-core"))) missing.push("playwright-core (npm ci in tests/browser)");
if (missing.length) {
  console.log(`SKIPPED: the browser tests need ${missing.join(", ")}`);
  process.exit(77);
}
const files = process.argv.slice(2).map((f) => join(here, f));
const r = spawnSync(process.execPath, ["--test", "--test-reporter=spec", ...files], { stdio: "inherit" });
process.exit(r.status ?? 1);
