/** A waitlist entry as the admin API sends it. `created_at` is an ISO-8601 UTC timestamp. */
export interface WaitlistEntry {
  id: string;
  email: string;
  created_at: string;
  ip_address: string | null;
  country: string | null;
  city: string | null;
  region: string | null;
}
