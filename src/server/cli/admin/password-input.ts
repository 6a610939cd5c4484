import { StringDecoder } from 'node:string_decoder';
import { assertStrongPassword } from '../../auth/admins.js';
import { CliError, type CliInput, type CliIo } from '../program.js';

/** Reads one line from a terminal without echoing it. */
function promptHidden(io: CliIo, prompt: string): Promise<string> {
  const { stdin, stderr } = io;
  return new Promise((resolve, reject) => {
    stderr.write(prompt);
    let value = '';
    const wasRaw = stdin.isRaw ?? false;
    stdin.setRawMode?.(true);
    stdin.resume();
    stdin.setEncoding('utf8');
    const finish = (err: Error | null) => {
      stdin.setRawMode?.(wasRaw);
      stdin.pause();
      stdin.removeListener('data', onData);
      stderr.write('\n');
      if (err) reject(err);
      else resolve(value);
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n') return finish(null);
        if (ch === '\u0003') return finish(new CliError('Cancelled.'));
        if (ch === '\u0004') return finish(value === '' ? new CliError('Cancelled.') : null);
        if (ch === '\u007f' || ch === '\b') value = [...value].slice(0, -1).join('');
        else if (ch >= ' ') value += ch;
      }
    };
    stdin.on('data', onData);
  });
}

/** The first line of a piped standard input (without its line ending). */
async function readFirstLine(stdin: CliInput): Promise<string> {
  const decoder = new StringDecoder('utf8');
  let text = '';
  for await (const chunk of stdin) {
    text += typeof chunk === 'string' ? chunk : decoder.write(chunk);
    const nl = text.indexOf('\n');
    if (nl !== -1) {
      text = text.slice(0, nl);
      break;
    }
  }
  return text.replace(/\r$/, '');
}

/** A new password: asked twice (hidden) on a terminal, else the first line of standard input. */
export async function readNewPassword(io: CliIo): Promise<string> {
  if (io.stdin.isTTY) {
    const first = await promptHidden(io, 'New password (at least 12 characters): ');
    await assertStrongPassword(first);
    const second = await promptHidden(io, 'Repeat the password: ');
    if (first !== second) throw new CliError('The passwords do not match.');
    return first;
  }
  const password = await readFirstLine(io.stdin);
  if (password === '') throw new CliError('No password given: pipe it as the first line of standard input.');
  return password;
}
