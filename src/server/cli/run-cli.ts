/**
 * Runs a command-line entry point: its resolved number becomes the exit code, and an unexpected
 * error is printed as one line (no stack trace) with exit code 1.
 */
export function runCli(main: () => Promise<number>): void {
  main().then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`Error: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
