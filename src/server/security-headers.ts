// Security headers, written once: they never vary (helmet rebuilt them on every request, the
// largest cost of a cached catalog read in bench/). Each header on every response also costs
// Node a validation and a copy per request, so a JSON response gets what matters for an API
// (OWASP REST Security Cheat Sheet: nothing to frame, script, sniff or embed, HTTPS only, no
// referrer), and the one HTML page (/docs) adds those that only a browser document uses.

/** On every response. */
export const API_SECURITY_HEADERS = {
  "content-security-policy": "default-src 'none'; frame-ancestors 'none'",
  "cross-origin-resource-policy": "same-origin",
  "referrer-policy": "no-referrer",
  "strict-transport-security": "max-age=31536000; includeSubDomains",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
} as const;

/** Added on HTML documents (/docs): isolation and legacy-browser switches a JSON body never needs. */
export const DOCUMENT_SECURITY_HEADERS = {
  "cross-origin-opener-policy": "same-origin",
  "origin-agent-cluster": "?1",
  "x-dns-prefetch-control": "off",
  "x-download-options": "noopen",
  "x-permitted-cross-domain-policies": "none",
  "x-xss-protection": "0",
} as const;
