import type { LinkResultTone } from '../../shared/site/pages.js';
import { siteContent } from '../../shared/site/content.js';
import { SiteLayout } from '../site/SiteLayout.js';
import { LinkPageCard, ResultView } from './link-page-parts.js';

/**
 * Template of the script-free page the server answers the e-mail link pages' no-JavaScript forms with
 * (LINK_RESULT_FILES): an outcome (`success`) or a link error. The server replaces the `title` and
 * `message` placeholders with HTML-escaped text.
 */
export function LinkResultPage({ tone, title, message }: { tone: LinkResultTone; title: string; message: string }) {
  return (
    <SiteLayout>
      <LinkPageCard>
        <ResultView tone={tone === 'success' ? 'success' : 'warning'} title={title} message={message} homeLink={siteContent.confirmPage.homeLink} />
      </LinkPageCard>
    </SiteLayout>
  );
}
