const AUTH_JS_SVG_PREFIX = 'data:image/svg+xml;utf-8,';

/**
 * The QR code as an image URL. auth-js puts the SVG after its prefix as it is; a `#` in it (an SVG
 * colour such as `fill="#fff"`) would end the data URL there and break the image, so it is
 * percent-encoded here.
 */
export function qrImageSource(qrCode: string): string {
  const svg = qrCode.startsWith(AUTH_JS_SVG_PREFIX) ? qrCode.slice(AUTH_JS_SVG_PREFIX.length) : qrCode;
  return svg.startsWith('data:') ? svg : `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`;
}
