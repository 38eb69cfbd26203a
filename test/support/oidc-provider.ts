// A real OpenID provider for single sign-on tests (issue 31): `oidc-provider` (a certified OpenID
// Provider) on a loopback port, with one confidential client that must use PKCE, its built-in dev
// login page (any login; the password is not checked) and consent page, and accounts whose `sub`
// and `email` are the login typed there, email verified unless the login starts with "unverified".
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after } from "node:test";
import Provider from "oidc-provider";

export type TestProvider = { issuer: string; client_id: string; client_secret: string };

export async function startOidcProvider(redirect_uri: string): Promise<TestProvider> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = { client_id: "esim-console", client_secret: "test-client-secret-0123456789abcdef" };
  const provider = new Provider(issuer, {
    clients: [
      {
        ...client,
        redirect_uris: [redirect_uri],
        grant_types: ["authorization_code"],
        response_types: ["code"],
      },
    ],
    pkce: { required: () => true },
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"] },
    findAccount: async (_ctx: unknown, id: string) => ({
      accountId: id,
      claims: async () => ({
        sub: id,
        email: id,
        email_verified: !id.startsWith("unverified"),
        name: `Person ${id.split("@")[0]}`,
      }),
    }),
    cookies: { keys: ["test-provider-cookie-key-0123456789"] },
    features: { devInteractions: { enabled: true } },
  });
  // Quiet: the provider reports refused requests (the tests' tampering) as server errors.
  provider.on("server_error", () => {});
  server.on("request", provider.callback());
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  server.closeIdleConnections?.();
  return { issuer, ...client };
}
