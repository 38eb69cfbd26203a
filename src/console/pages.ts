// What a console page module is: a function that registers its routes on an area's scope.
import type { AppContext } from "../shared/context.ts";
import type { App } from "../shared/http-types.ts";

/** Counts refused sign-ins per client address (the server's failure budget, passed in). */
export type SignInFailures = { take(ip: string): void; refund(ip: string): void };

export type ConsolePages = (scope: App, ctx: AppContext, failures: SignInFailures) => void;

/** The catalog import form carries a whole catalog; every other form fits the API's 64 KiB. */
export const CATALOG_FORM_LIMIT_BYTES = 4 * 1024 * 1024;
