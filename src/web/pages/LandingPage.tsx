import { siteContent } from '../../shared/site/content.js';
import { cardStyles } from '../ui/styles.js';
import { RotatingCategory } from '../waitlist/RotatingCategory.js';
import { WaitlistForm } from '../waitlist/WaitlistForm.js';

export function LandingPage() {
  const { headline, subtitle, rotatingCategories, rotatingIntervalMs, rotatingSrLabel } = siteContent;
  return (
    <section className="mx-auto flex w-full max-w-3xl flex-1 flex-col items-center justify-center px-5 py-16 text-center sm:px-8 sm:py-24">
      <h1 className="text-4xl font-bold tracking-tight text-balance text-white sm:text-6xl">{headline}</h1>
      <p className="mt-4 text-lg text-slate-300 sm:text-xl">{subtitle}</p>
      <div className="mt-6 min-h-10">
        <RotatingCategory items={rotatingCategories} intervalMs={rotatingIntervalMs} srLabel={rotatingSrLabel} />
      </div>
      <div className={`mt-10 w-full max-w-xl ${cardStyles} p-5 backdrop-blur sm:p-6`}>
        <WaitlistForm />
      </div>
    </section>
  );
}
