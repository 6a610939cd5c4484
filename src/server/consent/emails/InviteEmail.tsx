import { Button, Section, Text } from '@react-email/components';
import { emailContent } from '../../../shared/site/content.js';
import { buttonStyle, EmailLayout, textStyle } from './EmailLayout.js';
import { fill } from './words.js';

export interface InviteEmailProps {
  /** emailContent.invite.url resolved on PUBLIC_URL. */
  inviteUrl: string;
  manageUrl: string;
}

/** The launch invite, queued from the admin ("Invite selected"). */
export function InviteEmail({ inviteUrl, manageUrl }: InviteEmailProps) {
  const words = emailContent.invite;
  return (
    <EmailLayout preview={fill(words.preview)} heading={fill(words.heading)} manageUrl={manageUrl}>
      <Text style={textStyle}>{fill(words.body)}</Text>
      <Section style={{ padding: '8px 0 0' }}>
        <Button href={inviteUrl} style={buttonStyle}>
          {fill(words.button)}
        </Button>
      </Section>
    </EmailLayout>
  );
}
