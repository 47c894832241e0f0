/** A mistake in the command line: one line on stderr, exit code 2. */
export class UsageError extends Error {
  override name = "UsageError";
}
