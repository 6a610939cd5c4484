import type { ReactNode } from 'react';
import { Body, Container, Head, Heading, Html, Link, Preview, Section, Text } from '@react-email/components';
import { footerWords, type EmailOffering } from './words.js';
import { STATEMENTS_HEADING } from '../../../shared/lists/contract.js';

/**
 * The frame of every waitlist e-mail, in the site's look (src/web/styles.css: the ink header, the
 * emerald accent) but dark text on a light background, which every mail client renders and reads
 * well: table-based layout from @react-email, inline styles, no images, no web fonts.
 * The footer carries what each e-mail must: who sends it and why, the "Unsubscribe or erase your
 * data" link (the manage link, also the List-Unsubscribe header), the sender's postal address, and
 * the portal's registration line and legends (content.ts requiredStatements, issue 30).
 */
export const colors = {
  ink: '#060b18',
  page: '#f1f5f9',
  card: '#ffffff',
  text: '#0f172a',
  muted: '#475569',
  rule: '#e2e8f0',
  accent: '#34d399',
  /** Links on white: emerald-700, 5.5:1. */
  link: '#047857',
  /** On the accent: slate-950, 10:1. */
  onAccent: '#020617',
};

const fontFamily = "-apple-system, BlinkMacSystemFont, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif";

const styles = {
  body: { margin: 0, padding: '24px 0', backgroundColor: colors.page, color: colors.text, fontFamily },
  container: { maxWidth: '560px', margin: '0 auto' },
  brand: { backgroundColor: colors.ink, padding: '20px 32px', borderBottom: `3px solid ${colors.accent}`, borderRadius: '12px 12px 0 0' },
  brandName: { margin: 0, color: '#ffffff', fontSize: '18px', lineHeight: '24px', fontWeight: 700, letterSpacing: '-0.01em' },
  card: { backgroundColor: colors.card, padding: '32px', borderRadius: '0 0 12px 12px' },
  heading: { margin: '0 0 16px', color: colors.text, fontSize: '24px', lineHeight: '32px', fontWeight: 700 },
  footer: { padding: '24px 32px 8px' },
  footerText: { margin: '0 0 8px', color: colors.muted, fontSize: '13px', lineHeight: '20px' },
  footerLink: { color: colors.link, textDecoration: 'underline' },
  legendText: { margin: '0 0 8px', color: colors.muted, fontSize: '12px', lineHeight: '18px' },
  statements: { marginTop: '24px', padding: '16px 20px', backgroundColor: '#fffbeb', border: '1px solid #fcd34d', borderRadius: '10px' },
  statementsHeading: { margin: '0 0 8px', color: colors.text, fontSize: '15px', lineHeight: '22px', fontWeight: 700 },
  statement: { margin: '0 0 8px', color: colors.text, fontSize: '14px', lineHeight: '22px' },
};

export const textStyle = { margin: '0 0 16px', color: colors.text, fontSize: '16px', lineHeight: '26px' };
export const smallTextStyle = { margin: '16px 0 0', color: colors.muted, fontSize: '14px', lineHeight: '22px' };
export const buttonStyle = {
  display: 'inline-block',
  backgroundColor: colors.accent,
  color: colors.onAccent,
  fontSize: '16px',
  fontWeight: 600,
  lineHeight: '24px',
  textDecoration: 'none',
  borderRadius: '10px',
  padding: '12px 24px',
};

export interface EmailLayoutProps {
  preview: string;
  heading: string;
  /** The preferences page: unsubscribe or erase (PUBLIC_URL/unsubscribe?token=…). */
  manageUrl: string;
  children: ReactNode;
}

/** An e-mail to an address on no list (the restore e-mail): its own reason, and a notice in place of the manage link. */
export interface UnlistedFooter {
  reason: string;
  notice: string;
}

export function EmailLayout({
  preview,
  heading,
  manageUrl,
  children,
  unlisted,
  offering,
}: Omit<EmailLayoutProps, 'manageUrl'> & { offering?: EmailOffering | undefined } & ({ manageUrl: string; unlisted?: undefined } | { manageUrl?: undefined; unlisted: UnlistedFooter })) {
  const footer = footerWords(offering);
  return (
    <Html lang="en" dir="ltr">
      <Head>
        <meta name="color-scheme" content="light" />
        <meta name="supported-color-schemes" content="light" />
        <title>{heading}</title>
      </Head>
      <Preview>{preview}</Preview>
      <Body style={styles.body}>
        <Container style={styles.container}>
          <Section style={styles.brand}>
            <Text style={styles.brandName}>{footer.productName}</Text>
          </Section>
          <Section style={styles.card}>
            <Heading as="h1" style={styles.heading}>
              {heading}
            </Heading>
            {children}
            {offering && offering.statements.length > 0 ? (
              <Section style={styles.statements}>
                <Text style={styles.statementsHeading}>{STATEMENTS_HEADING}</Text>
                {offering.statements.map((statement) => (
                  <Text key={statement} style={styles.statement}>
                    {statement}
                  </Text>
                ))}
              </Section>
            ) : null}
          </Section>
          <Section style={styles.footer}>
            <Text style={styles.footerText}>{unlisted ? unlisted.reason : footer.reason}</Text>
            <Text style={styles.footerText}>
              {manageUrl === undefined ? (
                unlisted?.notice
              ) : (
                <Link href={manageUrl} style={styles.footerLink}>
                  {footer.manage}
                </Link>
              )}
            </Text>
            <Text style={styles.footerText}>{footer.postalAddress}</Text>
            <Text style={styles.footerText}>{footer.registration}</Text>
            {footer.legends.map((legend) => (
              <Text key={legend} style={styles.legendText}>
                {legend}
              </Text>
            ))}
          </Section>
        </Container>
      </Body>
    </Html>
  );
}
