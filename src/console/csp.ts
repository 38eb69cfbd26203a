// The console's Content-Security-Policy. Pages: this origin's stylesheet and images (QR codes), forms
// posting here, no script at all. The few pages that need one (passkeys: WebAuthn is a browser API
// that only script can call) get this origin's script files, and still no inline script: an HTML
// injection on them could not run anything that is not one of our files.
const BASE = [
  "default-src 'none'",
  "style-src 'self'",
  "img-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
];

export const CONSOLE_CSP = BASE.join("; ");

/** For a page that loads the console's own script files (and fetches nothing: `connect-src` stays 'none'). */
export const CONSOLE_CSP_WITH_SCRIPT = [...BASE, "script-src 'self'"].join("; ");
