// A route that answers some requests from their body's exact bytes (src/shared/endpoint.ts,
// answerFromBytes): a remembered answer goes out before any parse, schema or handler; anything
// else is parsed by the same strict parser as every JSON body, with the same refusals, and the
// handler sees the bytes it was given. A real Fastify instance, the service's own parser and
// problem handlers.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import Fastify from "fastify";
import { Type } from "typebox";
import { type BytesLookup, type ExactAnswer, endpoint } from "../src/shared/endpoint.ts";
import type { App } from "../src/shared/http-types.ts";
import { registerProblemHandlers } from "../src/shared/problem.ts";
import { refuseMalformedText } from "../src/shared/well-formed-text.ts";

const KNOWN = '{"name":"Ana"}';
const ANSWER: ExactAnswer = {
  status: 200,
  content_type: "application/json; charset=utf-8",
  body: '{"kept":1}',
};
const schema = {
  body: Type.Object({ name: Type.String({ minLength: 1 }) }, { additionalProperties: false }),
};

async function appWith() {
  const seen = { handled: [] as unknown[], bytes: [] as (string | null)[], looked_up: 0 };
  const lookup: BytesLookup = (_request, bytes) => {
    seen.looked_up++;
    return bytes.toString("latin1") === KNOWN ? ANSWER : null;
  };
  // The service's validation options (src/server/app.ts): unknown properties are refused, not dropped.
  const app = Fastify({
    logger: false,
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, allErrors: false } },
  });
  app.decorateRequest("partner", null);
  app.decorateRequest("wantsBodyBytes", false);
  app.decorateRequest("bodyBytes", null);
  refuseMalformedText(app);
  registerProblemHandlers(app);
  const from_bytes = endpoint({
    method: "POST",
    url: "/from-bytes",
    schema,
    handler: () => ({
      handler: (request, reply) => {
        seen.handled.push(request.body);
        seen.bytes.push(request.bodyBytes?.toString("latin1") ?? null);
        reply.send({ handled: request.body.name });
      },
      from_bytes: lookup,
    }),
  });
  const plain = endpoint({
    method: "POST",
    url: "/plain",
    schema,
    handler: () => (request, reply) => {
      reply.send({ handled: request.body.name, bytes: request.bodyBytes });
    },
  });
  from_bytes.register(app as unknown as App, {} as never);
  plain.register(app as unknown as App, {} as never);
  await app.ready();
  after(() => app.close());
  return { app, seen };
}

const post = (app: Awaited<ReturnType<typeof appWith>>["app"], url: string, payload?: string | Buffer) =>
  app.inject({
    method: "POST",
    url,
    ...(payload === undefined ? {} : { payload, headers: { "content-type": "application/json" } }),
  });

test("the exact remembered bytes are answered as kept: no parse, no schema, no handler", async () => {
  const { app, seen } = await appWith();
  const answer = await post(app, "/from-bytes", KNOWN);
  assert.equal(answer.statusCode, 200);
  assert.equal(answer.body, ANSWER.body);
  assert.equal(answer.headers["content-type"], ANSWER.content_type);
  assert.equal(seen.looked_up, 1);
  assert.deepEqual(seen.handled, [], "the handler did not run");
});

test("other bytes are parsed and validated as usual, and the handler gets them", async () => {
  const { app, seen } = await appWith();
  const spaced = '{ "name": "Ana" }';
  const answer = await post(app, "/from-bytes", spaced);
  assert.equal(answer.statusCode, 200);
  assert.deepEqual(answer.json(), { handled: "Ana" });
  assert.deepEqual(seen.handled, [{ name: "Ana" }]);
  assert.deepEqual(seen.bytes, [spaced]);
  const invalid = await post(app, "/from-bytes", '{"name":""}');
  assert.equal(invalid.statusCode, 400);
  assert.equal(invalid.json().code, "invalid_request");
  assert.equal(seen.handled.length, 1, "a body the schema refuses reaches no handler");
  // Elsewhere the parsed body is all a handler gets.
  assert.deepEqual((await post(app, "/plain", spaced)).json(), { handled: "Ana", bytes: null });
});

test("every refusal of the shared parser is the same on a route that answers from bytes", async () => {
  const { app, seen } = await appWith();
  const bodies: (string | Buffer | undefined)[] = [
    undefined,
    "",
    "{nope",
    '{"__proto__":{"name":"x"}}',
    '{"name":"Acme \\ud800"}',
    Buffer.concat([Buffer.from('{"name":"Acme '), Buffer.of(0xff), Buffer.from('"}')]),
    '{"name":"Ana","extra":1}',
  ];
  for (const body of bodies) {
    const [plain, from_bytes] = [await post(app, "/plain", body), await post(app, "/from-bytes", body)];
    assert.equal(plain.statusCode, 400, String(body));
    assert.equal(from_bytes.statusCode, plain.statusCode, String(body));
    const [a, b] = [plain.json(), from_bytes.json()];
    assert.equal(b.code, a.code, String(body));
    assert.equal(b.detail, a.detail, String(body));
    assert.deepEqual(b.errors, a.errors, String(body));
    const headers = (answer: typeof plain) => {
      const { "x-request-id": _id, date: _date, ...rest } = answer.headers;
      return rest;
    };
    assert.deepEqual(headers(from_bytes), headers(plain), String(body));
  }
  assert.deepEqual(seen.handled, []);
});
