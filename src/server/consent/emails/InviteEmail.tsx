import { Button, Section, Text } from '@react-email/components';
import { emailContent } from '../../../shared/site/content.js';
import { buttonStyle, EmailLayout, textStyle } from './EmailLayout.js';
import { fill, offeringWords, type EmailOffering } from './words.js';

export interface InviteEmailProps {
  /** emailContent.invite.url resolved on PUBLIC_URL. */
  inviteUrl: string;
  manageUrl: string;
  /** An offering list's e-mail (issue 31): its issuer's words and its statements. */
  offering?: EmailOffering | undefined;
}

/** The launch invite, queued from the admin ("Invite selected"). */
export function InviteEmail({ inviteUrl, manageUrl, offering }: InviteEmailProps) {
  const words = offering ? { ...emailContent.invite, ...offeringWords('invite', offering) } : emailContent.invite;
  return (
    <EmailLayout preview={fill(words.preview)} heading={fill(words.heading)} manageUrl={manageUrl} offering={offering}>
      <Text style={textStyle}>{fill(words.body)}</Text>
      <Section style={{ padding: '8px 0 0' }}>
        <Button href={inviteUrl} style={buttonStyle}>
          {fill(words.button)}
        </Button>
      </Section>
    </EmailLayout>
  );
}
