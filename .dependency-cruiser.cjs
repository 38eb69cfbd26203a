// The house rules (docs/architecture.md), checked by `npm run lint`. Layers, top to bottom:
//   entry points (src/main.ts, src/cli/)  >  src/server/ (mounting src/console/)  >  domains  >  src/ledger/, src/carrier/
//   >  the shared base (src/shared/, src/config.ts)  >  src/db/
// Nothing imports from a layer above it, nothing imports in a circle, and a domain's SQL
// (`*.sql.ts`) is read only by that domain: other code goes through the domain's functions.
const DOMAINS =
  "(partners|catalog|carts|orders|topups|wallet|notifications|events|esims|refunds|webhooks|console|people|audit|travellers)";

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "A circle has no top: split the shared part out, or pass a function in.",
      from: { path: "^src/" },
      to: { circular: true },
    },
    {
      name: "nothing-imports-entry-points",
      severity: "error",
      comment: "main.ts and the CLI are entry points: nothing below them imports them.",
      from: { path: "^src/", pathNot: "^src/(main\\.ts|cli/)" },
      to: { path: "^src/(main\\.ts|cli/)" },
    },
    {
      name: "server-is-the-top-floor",
      severity: "error",
      comment: "Only the entry points assemble the server; domains and the base never import it.",
      from: { path: "^src/", pathNot: "^src/(main\\.ts|cli/|server/)" },
      to: { path: "^src/server/" },
    },
    {
      name: "console-is-beside-the-server",
      severity: "error",
      comment:
        "The web console is top floor: only the server mounts it, and it takes what it needs from the server as arguments.",
      from: { path: "^src/", pathNot: "^src/(main\\.ts|cli/|server/|console/)" },
      to: { path: "^src/console/" },
    },
    {
      name: "console-imports-no-server",
      severity: "error",
      comment: "The console calls the domains' use cases, like the routes do; the server passes in the rest.",
      from: { path: "^src/console/" },
      to: { path: "^src/(server/|main\\.ts|cli/)" },
    },
    {
      name: "base-imports-no-domain",
      severity: "error",
      comment: "The ledger, the carrier port, the shared base and the database sit below every domain.",
      from: { path: "^src/(ledger|carrier|shared|db)/|^src/config\\.ts$" },
      to: { path: `^src/${DOMAINS}/` },
    },
    {
      name: "shared-base-is-below-ledger-and-carrier",
      severity: "error",
      comment: "The shared base and the database know nothing of money or carriers, only their types.",
      from: { path: "^src/(shared|db)/|^src/config\\.ts$" },
      to: { path: "^src/(ledger|carrier)/", dependencyTypesNot: ["type-only"] },
    },
    {
      name: "db-is-the-floor",
      severity: "error",
      comment: "The database layer imports nothing of ours but the configuration types.",
      from: { path: "^src/db/" },
      to: { path: "^src/", pathNot: "^src/(db/|config\\.ts$|shared/crash-points\\.ts$)" },
    },
    {
      name: "simulator-is-its-own-program",
      severity: "error",
      comment:
        "The carrier simulator stands in for another company's system: it shares nothing of ours above the base.",
      from: { path: "^src/carrier/(simulator|smdp-simulator)/" },
      to: { path: "^src/", pathNot: "^src/(carrier/|shared/|db/|config\\.ts$)" },
    },
    {
      name: "fakes-are-written-from-the-docs",
      severity: "error",
      comment:
        "A supplier's fake (src/simulators/) is built from the supplier's documentation, never from our adapter or domains: it may use the database pool, the Luhn digit and the simulator process plumbing, nothing else of ours.",
      from: { path: "^src/simulators/" },
      to: {
        path: "^src/",
        pathNot: "^src/(simulators/|db/|carrier/(luhn|simulator-process)\\.ts$)",
      },
    },
    {
      name: "simulators-answer-from-the-protocol-tables",
      severity: "error",
      comment:
        "A simulator written from our client's constants agrees with the client's mistakes (issue #30): it reads src/carrier/protocols/ instead.",
      from: { path: "^src/carrier/(simulator|smdp-simulator)/" },
      to: {
        path: "^src/carrier/(http-carrier\\.ts|es2plus/(messages|es2plus-client|order-profile|cancel-profile)\\.ts)$",
      },
    },
    {
      name: "domain-tables-through-their-domain",
      severity: "error",
      comment: "A domain's SQL is its own: call the domain's exported functions instead.",
      from: { path: `^src/([^/]+)/` },
      to: { path: `^src/${DOMAINS}/.*\\.sql\\.ts$`, pathNot: "^src/$1/" },
    },
  ],
  options: {
    parser: "swc",
    doNotFollow: { path: "node_modules" },
    includeOnly: "^src/",
    tsPreCompilationDeps: false,
    enhancedResolveOptions: { extensions: [".ts", ".js"] },
  },
};
