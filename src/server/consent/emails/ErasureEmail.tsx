import { Button, Section, Text } from '@react-email/components';
import { emailContent } from '../../../shared/site/content.js';
import { buttonStyle, EmailLayout, smallTextStyle, textStyle } from './EmailLayout.js';
import { fill } from './words.js';

export interface ErasureEmailProps {
  /** PUBLIC_URL/erase?token=… (opens the erasure page; a GET never erases). */
  eraseUrl: string;
  manageUrl: string;
}

/** The erasure link, sent when the preferences page asks for it (valid an hour, once). */
export function ErasureEmail({ eraseUrl, manageUrl }: ErasureEmailProps) {
  const words = emailContent.erasure;
  return (
    <EmailLayout preview={fill(words.preview)} heading={fill(words.heading)} manageUrl={manageUrl}>
      <Text style={textStyle}>{fill(words.body)}</Text>
      <Section style={{ padding: '8px 0' }}>
        <Button href={eraseUrl} style={buttonStyle}>
          {fill(words.button)}
        </Button>
      </Section>
      <Text style={smallTextStyle}>{fill(words.expiry)}</Text>
    </EmailLayout>
  );
}
