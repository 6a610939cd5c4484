import fs from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { CONFIG_ERROR_EXIT_CODE, ConfigError } from '../config.js';

/**
 * The skeleton of both command-line tools (`npm run admin`, `npm run db`): a table of commands, one
 * per file, each with its options, synopsis and help; arguments read with `node:util` parseArgs;
 * the usage text generated from the table; one mapping from error to exit code. Streams,
 * environment and working directory are injected, so tests run a CLI in-process.
 *
 * Exit codes: 0 ok, 1 failed (CliError may choose another), 2 bad usage, 78 bad configuration.
 */

/** Standard input; a terminal also has raw mode, for hidden password prompts. */
export type CliInput = NodeJS.ReadableStream & { isTTY?: boolean; isRaw?: boolean; setRawMode?(mode: boolean): unknown };

export interface CliIo {
  stdin: CliInput;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
  /** Relative FILE arguments resolve against this. */
  cwd: string;
}

/** Bad arguments: the message, then the usage text, exit code 2. */
export class UsageError extends Error {}

/** A failure to report as `Error: <message>`, exit code 1 unless given. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

export interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
}
export type OptionSpecs = Record<string, OptionSpec>;

export interface CommandArgs<O extends OptionSpecs> {
  positionals: string[];
  options: { [K in keyof O]?: O[K]['type'] extends 'boolean' ? true : string };
}

export interface Command<O extends OptionSpecs = OptionSpecs> {
  /** How the command is typed, e.g. `create EMAIL`; its first word is the command's name. */
  synopsis: string;
  /** The help text, a line each. */
  help: readonly string[];
  options?: O;
  /** Resolves to the exit code; nothing means 0. */
  run(args: CommandArgs<O>, io: CliIo): Promise<number | void>;
}

/** Types a command's options from its declaration. */
export function defineCommand<const O extends OptionSpecs = Record<never, OptionSpec>>(command: Command<O>): Command<O> {
  return command;
}

export interface CliProgram {
  /** The npm script: `npm run <name> -- <command>`. */
  name: string;
  commands: readonly Command[];
  /** Text after the list of commands. */
  footer?: string;
}

/** A synopsis up to this wide gets its help beside it; a longer one gets it below, indented. */
const SYNOPSIS_COLUMN = 20;

function commandName(command: Command): string {
  return command.synopsis.split(' ')[0] ?? '';
}

/** The usage text, generated from the command table. */
export function usageText(program: CliProgram): string {
  const entries = program.commands.map(({ synopsis, help }) => {
    if (synopsis.length > SYNOPSIS_COLUMN) return [`  ${synopsis}`, ...help.map((line) => `        ${line}`)];
    const [first = '', ...rest] = help;
    return [`  ${synopsis.padEnd(SYNOPSIS_COLUMN)}  ${first}`, ...rest.map((line) => `${' '.repeat(SYNOPSIS_COLUMN + 4)}${line}`)];
  });
  // Help written below its synopsis reads better with a blank line between commands.
  const spaced = program.commands.some(({ synopsis }) => synopsis.length > SYNOPSIS_COLUMN);
  const list = entries.map((lines) => lines.join('\n')).join(spaced ? '\n\n' : '\n');
  return `Usage: npm run ${program.name} -- <command>\n\nCommands:\n${list}\n${program.footer ? `\n${program.footer}` : ''}`;
}

/**
 * `--name value`, `--name=value`, `-x value` and `--flag`; `--` ends the options. Anything else
 * starting with `-` is a usage error, as is an option without its value.
 */
function parseCommandArgs<O extends OptionSpecs>(args: string[], specs: O): CommandArgs<O> {
  const { tokens } = parseArgs({ args, options: specs, strict: false, allowPositionals: true, tokens: true });
  const positionals: string[] = [];
  const options: Record<string, string | true> = {};
  for (const token of tokens) {
    if (token.kind === 'positional') positionals.push(token.value);
    if (token.kind !== 'option') continue;
    const spec = Object.hasOwn(specs, token.name) ? specs[token.name] : undefined;
    const glued = token.inlineValue && (spec?.type === 'boolean' || !token.rawName.startsWith('--'));
    if (!spec || glued) throw new UsageError(`Unknown option "${args[token.index]}".`);
    if (spec.type === 'boolean') {
      options[token.name] = true;
    } else {
      if (!token.value) throw new UsageError(`--${token.name} needs a value.`);
      options[token.name] = token.value;
    }
  }
  return { positionals, options: options as CommandArgs<O>['options'] };
}

/** The one mapping from an error to what the user reads and the exit code. */
function report(err: unknown, program: CliProgram, io: CliIo): number {
  if (err instanceof UsageError) {
    io.stderr.write(`Error: ${err.message}\n\n${usageText(program)}`);
    return 2;
  }
  if (err instanceof ConfigError) {
    io.stderr.write(`${err.message}\n`);
    return CONFIG_ERROR_EXIT_CODE;
  }
  io.stderr.write(`Error: ${err instanceof Error ? err.message : String(err)}\n`);
  return err instanceof CliError ? err.exitCode : 1;
}

/** `npm run` starts scripts in the package root; INIT_CWD is where the user typed the command. */
function defaultCwd(program: CliProgram, env: NodeJS.ProcessEnv): string {
  return env.npm_lifecycle_event === program.name && env.INIT_CWD ? env.INIT_CWD : process.cwd();
}

/** Runs one command line; resolves to the exit code. Unset parts of `io` are the process's own. */
export async function runProgram(program: CliProgram, argv: readonly string[], io: Partial<CliIo> = {}): Promise<number> {
  const env = io.env ?? process.env;
  const cli: CliIo = {
    stdin: io.stdin ?? process.stdin,
    stdout: io.stdout ?? process.stdout,
    stderr: io.stderr ?? process.stderr,
    env,
    cwd: io.cwd ?? defaultCwd(program, env),
  };
  const [name, ...args] = argv;
  if (!name) {
    cli.stderr.write(usageText(program));
    return 2;
  }
  if (name === 'help' || name === '--help' || name === '-h') {
    cli.stdout.write(usageText(program));
    return 0;
  }
  try {
    const command = program.commands.find((c) => commandName(c) === name);
    if (!command) throw new UsageError(`Unknown command "${name}".`);
    return (await command.run(parseCommandArgs(args, command.options ?? {}), cli)) ?? 0;
  } catch (err) {
    return report(err, program, cli);
  }
}

function startedAsScript(moduleUrl: string): boolean {
  const script = process.argv[1];
  if (!script) return false;
  try {
    return moduleUrl === pathToFileURL(fs.realpathSync(script)).href;
  } catch {
    return false;
  }
}

/** Runs the program on the process's arguments when `moduleUrl` is the script node started (not when a test imports it). */
export function runAsScript(program: CliProgram, moduleUrl: string): void {
  if (!startedAsScript(moduleUrl)) return;
  void runProgram(program, process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
