import type { PageName } from './pages.js';

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
    /** Added below the spec's texts only when double opt-in is on (SIGNUP_CONFIRMATION=required). */
    checkInbox: string;
  };
  /**
   * The consent record. `version` is stored with every entry (which words the visitor saw); change
   * it whenever `checkbox` or the form's wording changes. `checkbox`: null (the spec: no box), or
   * the text of a box that must be ticked to join.
   */
  consent: { version: string; checkbox: string | null };
  /** The double opt-in link's page. */
  confirmPage: {
    title: string;
    lead: string;
    button: string;
    busy: string;
    confirmed: { title: string; message: string };
    alreadyConfirmed: { title: string; message: string };
    missingToken: string;
    homeLink: string;
  };
  /** Every e-mail's "unsubscribe or erase" page. */
  preferencesPage: {
    title: string;
    /** `{email}` is replaced by the address the link is for. */
    lead: string;
    leadWithoutJs: string;
    unsubscribe: { button: string; busy: string; explanation: string; done: { title: string; message: string }; already: { title: string; message: string } };
    erase: {
      button: string;
      busy: string;
      explanation: string;
      confirmTitle: string;
      confirmDescription: string;
      confirmButton: string;
      cancel: string;
      done: { title: string; message: string };
    };
    /**
     * The manage link no longer erases (security review, finding 6): the page e-mails a link to the
     * erasure page instead. `{email}` is the masked address.
     */
    eraseLink: { button: string; busy: string; explanation: string; sent: { title: string; message: string } };
    missingToken: string;
    homeLink: string;
  };
  /** The erasure link's page (/erase): the `preferencesPage.erase` controls, for the address the link was sent to. */
  erasePage: {
    title: string;
    /** `{email}` is replaced by the masked address the link is for. */
    lead: string;
    leadWithoutJs: string;
    missingToken: string;
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
    checkInbox: 'Please check your inbox and confirm your email address to complete your signup.',
  },
  consent: { version: '2026-11-24', checkbox: null },
  confirmPage: {
    title: 'Confirm your email',
    lead: 'One last step: confirm that this address is yours to join the waitlist.',
    button: 'Confirm my email',
    busy: 'Confirming...',
    confirmed: { title: 'Email confirmed', message: "You're on the waitlist. We'll e-mail you when we launch." },
    alreadyConfirmed: { title: 'Already confirmed', message: 'This address was confirmed before. Nothing else to do.' },
    missingToken: 'This page needs the link from your confirmation e-mail. Open the link in the e-mail again.',
    homeLink: 'Go to the homepage',
  },
  preferencesPage: {
    title: 'Email preferences',
    lead: 'Manage the waitlist e-mails for {email}.',
    leadWithoutJs: 'Manage the waitlist e-mails for the address this link was sent to.',
    unsubscribe: {
      button: 'Unsubscribe',
      busy: 'Unsubscribing...',
      explanation: 'Stop all e-mail from us. Your place on the waitlist is kept.',
      done: { title: 'You are unsubscribed', message: 'We will not e-mail this address again.' },
      already: { title: 'Already unsubscribed', message: 'This address was unsubscribed before. We will not e-mail it again.' },
    },
    erase: {
      button: 'Erase my data',
      busy: 'Erasing...',
      explanation: 'Delete your waitlist entry and everything we stored with it.',
      confirmTitle: 'Erase your data?',
      confirmDescription: 'Your entry is deleted for good. You can join the waitlist again at any time.',
      confirmButton: 'Erase',
      cancel: 'Cancel',
      done: { title: 'Your data is erased', message: 'Your waitlist entry was deleted. We keep only a one-way fingerprint of the address so it is never imported again.' },
    },
    eraseLink: {
      button: 'E-mail me a link to erase my data',
      busy: 'Sending...',
      explanation: 'To erase your waitlist entry, we first send a link to this address. It works for an hour, once.',
      sent: { title: 'Check your inbox', message: 'We sent a link to erase your data to {email}. It works for an hour.' },
    },
    missingToken: 'This page needs the link from one of our e-mails. Open the link in the e-mail again.',
    homeLink: 'Go to the homepage',
  },
  erasePage: {
    title: 'Erase your data',
    lead: 'Erase the waitlist entry of {email}.',
    leadWithoutJs: 'Erase the waitlist entry of the address this link was sent to.',
    missingToken: 'This page needs the link from the e-mail we sent you. Ask for a new one on the e-mail preferences page.',
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
    confirm: 'Confirm your email',
    preferences: 'Email preferences',
    erase: 'Erase your data',
  },
  header: { homeLinkLabel: 'home', contactLabel: 'Contact' },
  skipLink: 'Skip to content',
  rotatingSrLabel: 'Asset categories:',
  honeypotLabel: 'Leave this field empty',
  thanksSpinnerLabel: 'Redirecting',
  loadingLabel: 'Loading…',
};

/**
 * The statements that cannot be lost (issue 30; Rule 200(c) asks every communication to name the
 * funding portal): the portal's name, its registration line and the footer's three legends, as
 * every page and every e-mail shows them. A test fails if a page or an e-mail template lacks one.
 */
export function requiredStatements(content: SiteContent = siteContent): string[] {
  const { productName, registrationNumber, footer } = content;
  return [productName, `${footer.registrationLabel}: ${registrationNumber}`, footer.fundingPortal, footer.noAdvice, footer.regulationCf];
}

/** Copy only the prerender uses: kept out of `siteContent`, so the browser's bundle does not carry it. */
export const prerenderContent = {
  /** The `<meta name="description">` of every page. */
  metaDescription:
    'Compliant tokenization solutions for private markets. Join the waitlist to be the first to access tokenized private assets.',
  /** The script-free page the server shows when a no-JavaScript signup fails. */
  signupError: { backLink: 'Back to the homepage' },
};

/**
 * The e-mails' words and the sender's identity (src/server/consent/emails). Kept out of
 * `siteContent` so the browser's bundle does not carry them. `{productName}` is replaced.
 */
export const emailContent = {
  /** deployment: the sender's postal address, required in every e-mail (CAN-SPAM). */
  postalAddress: 'Meridian Private Markets, 100 Example Street, New York, NY 10001, USA',
  footer: {
    reason: 'You receive this e-mail because this address joined the {productName} waitlist.',
    manage: 'Unsubscribe or erase your data',
  },
  confirmation: {
    subject: 'Confirm your email for the {productName} waitlist',
    preview: 'One click to confirm your place on the waitlist.',
    heading: 'Confirm your email',
    body: 'Thanks for joining the {productName} waitlist. Please confirm that this address is yours:',
    button: 'Confirm my email',
    expiry: 'The link works for {hours} hours. If you did not sign up, ignore this e-mail and you will not hear from us again.',
  },
  welcome: {
    subject: "You're on the {productName} waitlist",
    preview: "You're on the list: we'll write when we launch.",
    heading: "You're on the waitlist",
    body: "Thanks for joining. You'll be among the first to access tokenized private assets, and we'll e-mail you when we launch.",
  },
  invite: {
    subject: '{productName} is live: your invitation',
    preview: 'The wait is over: you are invited.',
    heading: 'You are invited',
    body: 'Thanks for waiting. {productName} is now open to you: sign in and explore tokenized private-market offerings.',
    button: 'Get started',
    /** Where the invite's button leads: a path on PUBLIC_URL or a full URL. */
    url: '/',
  },
  /** The erasure link, e-mailed when the preferences page asks for it (security review, finding 6). */
  erasure: {
    subject: 'Erase your data from the {productName} waitlist',
    preview: 'The link you asked for: it works for an hour.',
    heading: 'Erase your data',
    body: 'Someone, hopefully you, asked to erase this address from the {productName} waitlist. Open the page below to erase it:',
    button: 'Erase my data',
    expiry: 'The link works for an hour, once. If you did not ask for it, ignore this e-mail: nothing changes.',
  },
  test: {
    subject: 'Test e-mail from {productName}',
  },
};
