import { cleanPlaceName, nonEmptyLocation, type GeoLocation } from './location.js';

/** An HTTP JSON geolocation service (ipapi.co style: `ip`, `country_name`, `city`, `region`). */
export interface HttpSource {
  lookup(ip: string): Promise<GeoLocation | null>;
}

const MAX_RESPONSE_BYTES = 64 * 1024;

export class GeolocationHttpError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GeolocationHttpError';
  }
}

/**
 * `urlTemplate` contains `{ip}`, replaced by the URL-encoded address. The whole exchange (connect,
 * headers and body) is bounded by `timeoutMs`. Throws on any failure so the caller can fall back;
 * resolves null when the service answered but knows nothing about the address.
 *
 * The service's own `ip` field is not used: the server already knows the address it asked about.
 */
export function createHttpSource(urlTemplate: string, timeoutMs: number): HttpSource {
  return {
    async lookup(ip) {
      const url = urlTemplate.replaceAll('{ip}', encodeURIComponent(ip));
      const response = await fetch(url, {
        headers: { accept: 'application/json' },
        signal: AbortSignal.timeout(timeoutMs),
      });
      if (!response.ok) {
        await response.body?.cancel().catch(() => {});
        throw new GeolocationHttpError(`geolocation service answered HTTP ${response.status}`);
      }
      const declared = Number(response.headers.get('content-length') ?? 0);
      if (declared > MAX_RESPONSE_BYTES) {
        await response.body?.cancel().catch(() => {});
        throw new GeolocationHttpError('geolocation service answer is too large');
      }
      const text = await response.text();
      if (text.length > MAX_RESPONSE_BYTES) throw new GeolocationHttpError('geolocation service answer is too large');
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        throw new GeolocationHttpError('geolocation service answer is not JSON');
      }
      if (typeof body !== 'object' || body === null || Array.isArray(body)) {
        throw new GeolocationHttpError('geolocation service answer is not a JSON object');
      }
      const fields = body as Record<string, unknown>;
      // ipapi.co and similar answer 200 with `{ error: true, reason }` for reserved or unknown addresses.
      if (fields.error === true) throw new GeolocationHttpError(`geolocation service error: ${String(fields.reason ?? 'unknown')}`);
      return nonEmptyLocation({
        country: cleanPlaceName(fields.country_name),
        city: cleanPlaceName(fields.city),
        region: cleanPlaceName(fields.region),
      });
    },
  };
}
