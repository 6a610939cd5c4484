import { Button, Section, Text } from '@react-email/components';
import { emailContent } from '../../../shared/site/content.js';
import { buttonStyle, EmailLayout, smallTextStyle, textStyle } from './EmailLayout.js';
import { fill, offeringWords, type EmailOffering } from './words.js';

export interface ConfirmationEmailProps {
  /** PUBLIC_URL/confirm?token=… (opens the Confirm page; a GET never confirms). */
  confirmUrl: string;
  manageUrl: string;
  /** An offering list's e-mail (issue 31): its issuer's words and its statements. */
  offering?: EmailOffering | undefined;
  /** How long the confirm link works. */
  hours: number;
}

/** The double opt-in e-mail (SIGNUP_CONFIRMATION=required). */
export function ConfirmationEmail({ confirmUrl, manageUrl, hours, offering }: ConfirmationEmailProps) {
  const words = offering ? { ...emailContent.confirmation, ...offeringWords('confirmation', offering) } : emailContent.confirmation;
  return (
    <EmailLayout preview={fill(words.preview)} heading={fill(words.heading)} manageUrl={manageUrl} offering={offering}>
      <Text style={textStyle}>{fill(words.body)}</Text>
      <Section style={{ padding: '8px 0' }}>
        <Button href={confirmUrl} style={buttonStyle}>
          {fill(words.button)}
        </Button>
      </Section>
      <Text style={smallTextStyle}>{fill(words.expiry, { hours })}</Text>
    </EmailLayout>
  );
}
