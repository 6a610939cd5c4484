import { Text } from '@react-email/components';
import { emailContent } from '../../../shared/site/content.js';
import { EmailLayout, textStyle } from './EmailLayout.js';
import { fill } from './words.js';

export interface WelcomeEmailProps {
  manageUrl: string;
}

/** The optional welcome e-mail (MAIL_WELCOME=on), once an entry has joined or confirmed. */
export function WelcomeEmail({ manageUrl }: WelcomeEmailProps) {
  const words = emailContent.welcome;
  return (
    <EmailLayout preview={fill(words.preview)} heading={fill(words.heading)} manageUrl={manageUrl}>
      <Text style={{ ...textStyle, margin: 0 }}>{fill(words.body)}</Text>
    </EmailLayout>
  );
}
