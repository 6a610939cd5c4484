import { Button, Section, Text } from '@react-email/components';
import { emailContent } from '../../../shared/site/content.js';
import { buttonStyle, EmailLayout, smallTextStyle, textStyle } from './EmailLayout.js';
import { fill } from './words.js';

export interface ConfirmationEmailProps {
  /** PUBLIC_URL/confirm?token=… (opens the Confirm page; a GET never confirms). */
  confirmUrl: string;
  manageUrl: string;
  /** How long the confirm link works. */
  hours: number;
}

/** The double opt-in e-mail (SIGNUP_CONFIRMATION=required). */
export function ConfirmationEmail({ confirmUrl, manageUrl, hours }: ConfirmationEmailProps) {
  const words = emailContent.confirmation;
  return (
    <EmailLayout preview={fill(words.preview)} heading={fill(words.heading)} manageUrl={manageUrl}>
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
