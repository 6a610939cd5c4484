import type { PageName } from '../../shared/site/pages.js';

/**
 * Every piece of marketing copy and every deployment-specific value of the public site, in one place.
 * Change the values marked "deployment" before going live; the rest is the product's wording.
 */
export interface SiteContent {
  /** deployment: shown in the header, the page titles and the footer. */
  productName: string;
  /** deployment: the header's mailto link. */
  contactEmail: string;
  /** deployment: the funding portal's registration number shown in the footer. */
  registrationNumber: string;
  /** deployment: the city the portal is based in, shown in the footer. */
  city: string;
  /** deployment: external page with terms, privacy policy and educational materials. */
  legalUrl: string;
  headline: string;
  subtitle: string;
  /** The rotating asset-category line: order of appearance. */
  rotatingCategories: readonly string[];
  rotatingIntervalMs: number;
  helperText: string;
  form: { placeholder: string; label: string; submit: string; submitting: string };
  thanks: {
    title: string;
    lead: string;
    notified: string;
    /** Shown right after `notified`; read out as `rocketLabel`. */
    rocketEmoji: string;
    rocketLabel: string;
    redirecting: string;
    redirectAfterMs: number;
  };
  notFound: { title: string; link: string };
  footer: {
    fundingPortal: string;
    noAdvice: string;
    regulationCf: string;
    legalLinkText: string;
    registrationLabel: string;
    cityLabel: string;
    /** Licence attribution for the CC BY 4.0 DB-IP geolocation data the server uses. */
    geoAttribution: { text: string; url: string };
  };
  /** Page titles, one per page of the page table; each is followed by " · {productName}". */
  pageTitles: Record<PageName, string>;
  header: { homeLinkLabel: string; contactLabel: string };
  skipLink: string;
  /** Screen-reader text that stands in for the rotating line (which is hidden from them). */
  rotatingSrLabel: string;
  honeypotLabel: string;
  thanksSpinnerLabel: string;
  loadingLabel: string;
}

export const siteContent: SiteContent = {
  productName: 'Meridian Private Markets',
  contactEmail: 'hello@meridian-markets.example',
  registrationNumber: 'FINRA CRD #000000 · SEC File No. 007-00000',
  city: 'New York, NY',
  legalUrl: 'https://meridian-markets.example/legal',
  headline: 'Private Markets On Chain',
  subtitle: 'Compliant Tokenization Solutions',
  rotatingCategories: ['Artificial Intelligence', 'Blockchain', 'IP', 'Art', 'Pre-IPO'],
  rotatingIntervalMs: 2000,
  helperText: 'Be the first to access tokenized private assets.',
  form: { placeholder: 'Enter your email', label: 'Email address', submit: 'Join the Waitlist', submitting: 'Joining...' },
  thanks: {
    title: 'Thank You!',
    lead: "You're now on the waitlist.",
    notified: "You'll be notified when we",
    rocketEmoji: '🚀',
    rocketLabel: 'launch',
    redirecting: 'Redirecting you back to the homepage in a few seconds...',
    redirectAfterMs: 5000,
  },
  notFound: { title: 'Oops! Page not found', link: 'Return to Home' },
  footer: {
    fundingPortal:
      'This website is operated by a funding platform. Investments in private securities are speculative, illiquid and involve a high degree of risk, including the possible loss of your entire investment.',
    noAdvice:
      'Nothing on this website constitutes investment advice, legal or tax advice, or a recommendation, offer or solicitation to buy or sell any security.',
    regulationCf:
      'Securities are offered through a registered funding portal intermediary under Regulation Crowdfunding (Regulation CF).',
    legalLinkText: 'Terms of use, privacy policy and educational materials',
    registrationLabel: 'Registration',
    cityLabel: 'Based in',
    geoAttribution: { text: 'IP Geolocation by DB-IP', url: 'https://db-ip.com/' },
  },
  pageTitles: {
    home: 'Private Markets On Chain',
    thanks: "You're on the waitlist",
    notFound: 'Page not found',
    auth: 'Admin Login',
    admin: 'Waitlist administration',
  },
  header: { homeLinkLabel: 'home', contactLabel: 'Contact' },
  skipLink: 'Skip to content',
  rotatingSrLabel: 'Asset categories:',
  honeypotLabel: 'Leave this field empty',
  thanksSpinnerLabel: 'Redirecting',
  loadingLabel: 'Loading…',
};

/** Copy only the prerender uses: kept out of `siteContent`, so the browser's bundle does not carry it. */
export const prerenderContent = {
  /** The `<meta name="description">` of every page. */
  metaDescription:
    'Compliant tokenization solutions for private markets. Join the waitlist to be the first to access tokenized private assets.',
  /** The script-free page the server shows when a no-JavaScript signup fails. */
  signupError: { backLink: 'Back to the homepage' },
};
