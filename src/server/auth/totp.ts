import { Secret, TOTP } from 'otpauth';
import type QRCodeModule from 'qrcode';

/** GoTrue's TOTP parameters (pquerna/otp defaults): SHA-1, 6 digits, 30 s, one step of tolerance each way. */
const ALGORITHM = 'SHA1';
const DIGITS = 6;
export const TOTP_PERIOD_SECONDS = 30;
const WINDOW = 1;
/** 20 random bytes, as pquerna/otp generates (32 base32 characters). */
const SECRET_BYTES = 20;

export interface NewTotp {
  /** Base32, for typing into an authenticator app. */
  secret: string;
  /** The `otpauth://totp/…` URI the QR code holds. */
  uri: string;
  /** The QR code of `uri` as an SVG document. */
  qrCode: string;
}

function totpOf(secret: string, issuer = '', label = ''): TOTP {
  return new TOTP({ issuer, label, algorithm: ALGORITHM, digits: DIGITS, period: TOTP_PERIOD_SECONDS, secret: Secret.fromBase32(secret) });
}

/** A new random secret with its URI and QR code (error correction H, as GoTrue). */
export async function newTotp(issuer: string, accountName: string): Promise<NewTotp> {
  const secret = new Secret({ size: SECRET_BYTES }).base32;
  const uri = totpOf(secret, issuer, accountName).toString();
  const QRCode = (await import('qrcode')).default as typeof QRCodeModule;
  const svg = await QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'H', margin: 1 });
  // auth-js pastes the SVG unencoded after `data:image/svg+xml;utf-8,`, where a `#` would end the
  // URL: colours by name, as GoTrue's SVG has none.
  const qrCode = svg.replaceAll('"#ffffff"', '"white"').replaceAll('"#000000"', '"black"');
  return { secret, uri, qrCode };
}

/**
 * The time step (Unix seconds / 30) the code belongs to, within one step of `nowMs`, or null when
 * it matches none. Only 6 ASCII digits are tried.
 */
export function matchTotpStep(secret: string, code: string, nowMs: number): number | null {
  if (!/^\d{6}$/.test(code)) return null;
  const delta = totpOf(secret).validate({ token: code, timestamp: nowMs, window: WINDOW });
  return delta === null ? null : TOTP.counter({ period: TOTP_PERIOD_SECONDS, timestamp: nowMs }) + delta;
}
