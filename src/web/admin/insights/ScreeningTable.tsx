import { useId } from 'react';
import { SCREENING_REASON_LABELS, type ScreeningCounts } from '../../../shared/waitlist/screening.js';
import { formatCount, insightTexts } from './insight-copy.js';

const texts = insightTexts.screening;
const headerCell = 'border-b border-white/10 px-3 py-2 text-xs font-semibold tracking-wide text-slate-300 uppercase';
const bodyCell = 'border-b border-white/5 px-3 py-2';

/**
 * Held and refused signups by reason in the view's period (issue 28; counted by the signup room,
 * read by GET …/insights as `screening`): a plain table, every reason with its count.
 */
export function ScreeningTable({ screening, from, to }: { screening: ScreeningCounts; from: string | undefined; to: string | undefined }) {
  const headingId = useId();
  return (
    <div className="mt-8">
      <h3 id={headingId} className="text-base font-semibold text-white">
        {texts.heading}
      </h3>
      <p className="mt-1 text-xs text-slate-400">
        {texts.period(from, to)} {texts.note}
      </p>
      <table aria-labelledby={headingId} className="mt-3 w-full max-w-md border-separate border-spacing-0 text-left text-sm">
        <thead>
          <tr>
            <th scope="col" className={headerCell}>
              {texts.columns.reason}
            </th>
            <th scope="col" className={`${headerCell} text-right`}>
              {texts.columns.count}
            </th>
          </tr>
        </thead>
        <tbody>
          {screening.map(({ reason, count }) => (
            <tr key={reason}>
              <th scope="row" className={`${bodyCell} font-normal text-slate-200`}>
                {SCREENING_REASON_LABELS[reason]}
              </th>
              <td className={`${bodyCell} text-right text-slate-100 tabular-nums`}>{formatCount(count)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
