// The size rule (docs/architecture.md, "Sizes"): no product file over 300 lines and no function over
// 80. Product files are src/**, web/src/** and bin/** without tests (*.test.ts) and test support
// (testing/ folders). Run by `npm run check`. Nothing is over today; KNOWN once listed the debt
// (each with its size, allowed to shrink, never to grow) and stays for a file that must be let in
// with a reason, which then goes beside its entry.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";

const MAX_FILE_LINES = 300;
const MAX_FUNCTION_LINES = 80;
const ROOTS = ["src", "web/src", "bin"];

/** Known debt, by file (lines) and by `file#function` (lines); empty since issue 18's split. */
const KNOWN = {};

function productFiles(dir, out = []) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = path.posix.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== "testing" && entry.name !== "node_modules") productFiles(file, out);
    } else if (/\.(ts|tsx|mjs)$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name)) out.push(file);
  }
  return out;
}

/** A function's name: its own, its binding's, or `<enclosing>/<anonymous>`; methods `Class.name`. */
function functionName(node, source) {
  const parent = node.parent;
  const own =
    node.name?.getText(source) ??
    (parent && (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent))
      ? parent.name.getText(source)
      : undefined);
  if (own) return parent && ts.isClassDeclaration(parent) && parent.name ? `${parent.name.text}.${own}` : own;
  for (let up = parent; up; up = up.parent) {
    if (ts.isFunctionLike(up) && up !== node) return `${functionName(up, source)}/<anonymous>`;
  }
  return "<anonymous>";
}

/** Every named function, method or arrow (by its binding) longer than the limit. */
function longFunctions(file, text) {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found = [];
  const visit = (node) => {
    if (ts.isFunctionLike(node) && "body" in node && node.body) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = end - start + 1;
      if (lines > MAX_FUNCTION_LINES) found.push({ name: functionName(node, source), lines });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const problems = [];
const seen = new Set();
for (const file of ROOTS.flatMap((root) => productFiles(root))) {
  const text = readFileSync(file, "utf8");
  const lines = text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
  const check = (key, size, max, what) => {
    if (size <= max) return;
    seen.add(key);
    const known = KNOWN[key];
    if (known === undefined) problems.push(`${key}: ${what} has ${size} lines (at most ${max})`);
    else if (size > known)
      problems.push(`${key}: ${what} grew to ${size} lines (known debt: ${known}, at most ${max})`);
  };
  check(file, lines, MAX_FILE_LINES, "the file");
  for (const fn of longFunctions(file, text))
    check(`${file}#${fn.name}`, fn.lines, MAX_FUNCTION_LINES, "the function");
}
for (const key of Object.keys(KNOWN)) {
  if (!seen.has(key))
    problems.push(`${key}: within the limit now: remove it from KNOWN in scripts/check-sizes.mjs`);
}
if (problems.length > 0) {
  console.error(
    `Size rule (${MAX_FILE_LINES} lines a file, ${MAX_FUNCTION_LINES} a function):\n  ${problems.join("\n  ")}`,
  );
  process.exit(1);
}
