import { Button, Section, Text } from '@react-email/components';
import { emailContent } from '../../../shared/site/content.js';
import { buttonStyle, EmailLayout, smallTextStyle, textStyle } from './EmailLayout.js';
import { fill } from './words.js';

export interface RestoreEmailProps {
  /** PUBLIC_URL/confirm?token=… with a restore token (opens the Confirm page; a GET never restores). */
  restoreUrl: string;
  /** How long the link works. */
  hours: number;
}

/** "Confirm it's you": an erased or unsubscribed address was entered in the signup form again (consent/restore.ts). */
export function RestoreEmail({ restoreUrl, hours }: RestoreEmailProps) {
  const words = emailContent.restore;
  return (
    <EmailLayout preview={fill(words.preview)} heading={fill(words.heading)} unlisted={{ reason: fill(words.reason), notice: fill(words.notice) }}>
      <Text style={textStyle}>{fill(words.body)}</Text>
      <Section style={{ padding: '8px 0' }}>
        <Button href={restoreUrl} style={buttonStyle}>
          {fill(words.button)}
        </Button>
      </Section>
      <Text style={smallTextStyle}>{fill(words.expiry, { hours })}</Text>
    </EmailLayout>
  );
}
