import { siteContent } from '../../shared/site/content.js';
import { Spinner } from '../ui/Spinner.js';

/** What a lazily loaded page shows while its code loads; also the prerendered HTML of those routes. */
export function PageLoading() {
  return (
    <main className="flex min-h-dvh items-center justify-center">
      <Spinner label={siteContent.loadingLabel} className="size-10" />
    </main>
  );
}
