// The house rules (docs/architecture.md), checked by `npm run lint`. Layers, top to bottom:
//   entry points (src/main.ts, src/cli/)  >  src/server/ (mounting src/console/)  >  domains
//   >  src/suppliers/ (starts the adapters and, in the sandbox, the fakes)  >  src/ledger/, src/carrier/ (the port
//   and one adapter folder per supplier), src/simulators/ (the fakes, separate programs)
//   >  the shared base (src/shared/, src/config.ts)  >  src/db/, src/protocols/ (sourced wire tables), src/lib/
// Nothing imports from a layer above it, nothing imports in a circle (scripts/folder-ties.ts also
// refuses a circle between folders), and a domain's SQL (`*.sql.ts`) is read only by that domain.
// Nothing imports from a layer above it, nothing imports in a circle, and a domain's SQL
// (`*.sql.ts`) is read only by that domain: other code goes through the domain's functions.
const DOMAINS =
  "(partners|catalog|carts|orders|topups|wallet|notifications|events|esims|refunds|webhooks|console|people|audit)";

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
      comment:
        "The ledger, the carriers, the suppliers, the shared base and the database sit below every domain.",
      from: { path: "^src/(ledger|carrier|suppliers|simulators|shared|db|protocols|lib)/|^src/config\\.ts$" },
      to: { path: `^src/${DOMAINS}/` },
    },
    {
      name: "shared-base-is-below-ledger-and-carrier",
      severity: "error",
      comment: "The shared base and the database know nothing of money or carriers, only their types.",
      from: { path: "^src/(shared|db|protocols|lib)/|^src/config\\.ts$" },
      to: { path: "^src/(ledger|carrier|suppliers|simulators)/", dependencyTypesNot: ["type-only"] },
    },
    {
      name: "adapters-start-no-fakes",
      severity: "error",
      comment:
        "The carrier port and its adapters never start a fake: src/suppliers/ assembles them, so no folder ties carrier and simulators.",
      from: { path: "^src/(carrier|ledger)/" },
      to: { path: "^src/(suppliers|simulators)/" },
    },
    {
      name: "floor-is-self-contained",
      severity: "error",
      comment: "The sourced protocol tables and the small pure helpers import nothing of ours above them.",
      from: { path: "^src/(protocols|lib)/" },
      to: { path: "^src/", pathNot: "^src/(protocols|lib)/" },
    },
    {
      name: "db-is-the-floor",
      severity: "error",
      comment: "The database layer imports nothing of ours but the configuration types.",
      from: { path: "^src/db/" },
      to: { path: "^src/", pathNot: "^src/(db/|config\\.ts$|lib/)" },
    },
    {
      name: "fakes-are-written-from-the-docs",
      severity: "error",
      comment:
        "A fake (src/simulators/: our carrier protocol's simulator, the SM-DP+, Airalo, eSIM Go) stands in for another company's system and is built from its documentation, never from our adapters or domains (a simulator written from our client's constants agrees with the client's mistakes, issue #30): it may use the database pool, the sourced protocol tables and the small helpers, nothing else of ours.",
      from: { path: "^src/simulators/" },
      to: { path: "^src/", pathNot: "^src/(simulators|db|protocols|lib)/" },
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
