// What a console page module is: a function that registers its routes on an area's scope.
import type { AppContext } from "../shared/context.ts";
import type { App } from "../shared/http-types.ts";

/**
 * The sign-in's failure budget per client address (the server's, passed in): runs a sign-in attempt
 * holding a token of the address's budget, kept when the password is refused (401); past the budget
 * even the right password is 429, so guessing learns nothing.
 */
export type SignInFailures = {
  attempt<T>(ip: string, area: "partner" | "operator", work: () => Promise<T>): Promise<T>;
};

export type ConsolePages = (scope: App, ctx: AppContext, failures: SignInFailures) => void;

/** The catalog import form carries a whole catalog; every other form fits the API's 64 KiB. */
export const CATALOG_FORM_LIMIT_BYTES = 4 * 1024 * 1024;
