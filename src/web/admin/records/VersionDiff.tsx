import { diffLines } from 'diff';
import type { RecordVersion } from '../../../shared/admin/records-api.js';
import { recordsTexts, versionLabel } from './copy.js';

/** A prerendered page is one long line of HTML: one tag a line, so a changed sentence is a changed line. */
function linesOf(part: string, text: string): string {
  return part.endsWith('.html') ? text.replace(/>\s*</g, '>\n<') : text;
}

interface Line {
  text: string;
  change: 'same' | 'removed' | 'added';
}

/** The two columns of one part: the older text with its removed lines marked, the newer with its added ones. */
function sides(older: string, newer: string): { left: Line[]; right: Line[]; changed: boolean } {
  const left: Line[] = [];
  const right: Line[] = [];
  let changed = false;
  for (const chunk of diffLines(older, newer)) {
    const lines = chunk.value.replace(/\n$/, '').split('\n');
    if (chunk.added) {
      changed = true;
      right.push(...lines.map((text) => ({ text, change: 'added' as const })));
    } else if (chunk.removed) {
      changed = true;
      left.push(...lines.map((text) => ({ text, change: 'removed' as const })));
    } else {
      left.push(...lines.map((text) => ({ text, change: 'same' as const })));
      right.push(...lines.map((text) => ({ text, change: 'same' as const })));
    }
  }
  return { left, right, changed };
}

const lineStyles: Record<Line['change'], string> = {
  same: 'text-slate-300',
  removed: 'bg-rose-500/15 text-rose-100',
  added: 'bg-emerald-500/15 text-emerald-100',
};
const marks: Record<Line['change'], string> = { same: ' ', removed: '−', added: '+' };

function Column({ title, lines }: { title: string; lines: Line[] }) {
  return (
    <div className="min-w-0">
      <p className="mb-2 text-xs font-semibold tracking-wide text-slate-400 uppercase">{title}</p>
      <pre className="max-h-96 overflow-auto rounded-xl border border-white/10 bg-slate-950/60 p-3 font-mono text-xs leading-5" tabIndex={0}>
        {lines.map((line, i) => (
          <div key={i} className={`whitespace-pre-wrap [overflow-wrap:anywhere] ${lineStyles[line.change]}`}>
            <span aria-hidden="true" className="select-none pr-2 text-slate-500">
              {marks[line.change]}
            </span>
            {line.change !== 'same' && <span className="sr-only">{line.change === 'removed' ? recordsTexts.compare.removed : recordsTexts.compare.added}: </span>}
            {line.text}
          </div>
        ))}
      </pre>
    </div>
  );
}

/** Two versions of one text side by side, part by part, their differences marked. */
export function VersionDiff({ older, newer }: { older: RecordVersion; newer: RecordVersion }) {
  const parts = [...new Set([...Object.keys(older.parts), ...Object.keys(newer.parts)])].sort();
  const compared = parts.map((part) => ({ part, ...sides(linesOf(part, older.parts[part] ?? ''), linesOf(part, newer.parts[part] ?? '')) }));
  return (
    <div className="mt-4 space-y-6" data-testid="version-diff">
      <p className="text-sm text-slate-400">{recordsTexts.compare.legend}</p>
      {compared.every((c) => !c.changed) && <p className="text-sm text-slate-200">{recordsTexts.compare.same}</p>}
      {compared.map(({ part, left, right }) => (
        <section key={part} aria-label={part}>
          <h4 className="mb-2 font-mono text-sm text-white">{part}</h4>
          <div className="grid grid-cols-1 gap-4 lg:grid-cols-2">
            <Column title={versionLabel(older)} lines={left} />
            <Column title={versionLabel(newer)} lines={right} />
          </div>
        </section>
      ))}
    </div>
  );
}
