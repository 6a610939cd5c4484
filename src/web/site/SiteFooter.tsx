import { siteContent } from '../../shared/site/content.js';

export function SiteFooter() {
  const { footer, registrationNumber, city, legalUrl, productName } = siteContent;
  return (
    <footer className="border-t border-white/10 bg-black/20">
      <div className="mx-auto max-w-6xl space-y-4 px-5 py-8 text-xs leading-relaxed text-slate-400 sm:px-8">
        <p>{footer.fundingPortal}</p>
        <p>{footer.noAdvice}</p>
        <p>{footer.regulationCf}</p>
        <div className="flex flex-col gap-x-6 gap-y-2 border-t border-white/10 pt-4 sm:flex-row sm:flex-wrap sm:items-center">
          <p className="font-medium text-slate-300">{productName}</p>
          <p>
            {footer.registrationLabel}: {registrationNumber}
          </p>
          <p>
            {footer.cityLabel} {city}
          </p>
          <a href={legalUrl} className="rounded-sm text-slate-300 underline underline-offset-2 hover:text-white">
            {footer.legalLinkText}
          </a>
          <a
            href={footer.geoAttribution.url}
            className="rounded-sm text-slate-400 underline underline-offset-2 hover:text-white sm:ml-auto"
          >
            {footer.geoAttribution.text}
          </a>
        </div>
      </div>
    </footer>
  );
}
