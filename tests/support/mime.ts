import type { ReceivedMail } from './smtp.js';

/**
 * The decoded parts of a message the test SMTP server received: enough MIME for what nodemailer
 * writes (a single part, or multipart/alternative of text and HTML; 7bit, 8bit, quoted-printable
 * or base64; UTF-8).
 */
export interface MailParts {
  text: string | null;
  html: string | null;
}

function headerMap(head: string): Map<string, string> {
  const headers = new Map<string, string>();
  for (const line of head.replace(/\r\n[ \t]+/g, ' ').split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return headers;
}

function decode(content: string, encoding: string | undefined): string {
  switch ((encoding ?? '7bit').toLowerCase()) {
    case 'base64':
      return Buffer.from(content.replace(/\s+/g, ''), 'base64').toString('utf8');
    case 'quoted-printable': {
      const unfolded = content.replace(/=\r\n/g, '');
      const bytes: number[] = [];
      for (let i = 0; i < unfolded.length; i++) {
        const c = unfolded[i]!;
        if (c === '=' && /^[0-9A-F]{2}$/i.test(unfolded.slice(i + 1, i + 3))) {
          bytes.push(parseInt(unfolded.slice(i + 1, i + 3), 16));
          i += 2;
        } else {
          bytes.push(...Buffer.from(c, 'utf8'));
        }
      }
      return Buffer.from(bytes).toString('utf8');
    }
    default:
      return content;
  }
}

function boundaryOf(contentType: string | undefined): string | null {
  const m = /boundary="?([^";]+)"?/i.exec(contentType ?? '');
  return m ? m[1]! : null;
}

export function mailParts(mail: Pick<ReceivedMail, 'raw'>): MailParts {
  const parts: MailParts = { text: null, html: null };
  const visit = (raw: string) => {
    const split = raw.indexOf('\r\n\r\n');
    const headers = headerMap(split === -1 ? raw : raw.slice(0, split));
    const body = split === -1 ? '' : raw.slice(split + 4);
    const type = headers.get('content-type') ?? 'text/plain';
    const boundary = boundaryOf(type);
    if (/^multipart\//i.test(type) && boundary) {
      const sections = body.split(`--${boundary}`);
      // Before the first boundary is the preamble; after the closing `--boundary--`, the epilogue.
      for (const section of sections.slice(1)) {
        if (section.startsWith('--')) break;
        visit(section.replace(/^\r\n/, '').replace(/\r\n$/, ''));
      }
      return;
    }
    const decoded = decode(body, headers.get('content-transfer-encoding')).replace(/\r\n/g, '\n');
    if (/^text\/html/i.test(type)) parts.html ??= decoded;
    else if (/^text\/plain/i.test(type)) parts.text ??= decoded;
  };
  visit(mail.raw);
  return parts;
}
