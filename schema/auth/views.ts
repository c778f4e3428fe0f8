/** An API key as the auth API lists it (never the key itself, which is shown once at creation). */
export interface ApiKeyView {
  id: string
  name: string
  role: string
  prefix: string
  created_at: string
  expires_at: string | null
  last_used_at: string | null
}
