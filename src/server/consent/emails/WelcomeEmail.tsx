import { Text } from '@react-email/components';
import { emailContent } from '../../../shared/site/content.js';
import { EmailLayout, textStyle } from './EmailLayout.js';
import { fill, offeringWords, type EmailOffering } from './words.js';

export interface WelcomeEmailProps {
  manageUrl: string;
  /** An offering list's e-mail (issue 31): its issuer's words and its statements. */
  offering?: EmailOffering | undefined;
}

/** The optional welcome e-mail (MAIL_WELCOME=on), once an entry has joined or confirmed. */
export function WelcomeEmail({ manageUrl, offering }: WelcomeEmailProps) {
  const words = offering ? { ...emailContent.welcome, ...offeringWords('welcome', offering) } : emailContent.welcome;
  return (
    <EmailLayout preview={fill(words.preview)} heading={fill(words.heading)} manageUrl={manageUrl} offering={offering}>
      <Text style={{ ...textStyle, margin: 0 }}>{fill(words.body)}</Text>
    </EmailLayout>
  );
}
