// What every supplier's HTTP client (airalo/, esimgo/) does the same way with fetch's answers and
// failures: a body read within a byte cap, JSON that may not be JSON, and a failure told apart by
// whether the request may have reached the supplier (a lost answer is an unknown outcome; a refused
// or unresolved connection never sent anything, so asking again cannot make a second order).

/** The body as text, or null when it is longer than `max_bytes` (read no further than that). */
export async function readCapped(response: Response, max_bytes: number): Promise<string | null> {
  if (Number(response.headers.get("content-length") ?? 0) > max_bytes) {
    await response.body?.cancel();
    return null;
  }
  if (response.body === null) return "";
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of response.body) {
    total += chunk.length;
    if (total > max_bytes) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** The parsed body, or undefined when it is not JSON (an HTML error page of a proxy). */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Why a call got no answer, in at most `max_length` characters, and `sent`: whether the request
 * may have reached `supplier` (only a refused or unresolved connection says it did not).
 */
export function describeFailure(
  error: unknown,
  input: { supplier: string; timeout_ms: number; max_length: number },
): { reason: string; sent: boolean } {
  type Failure = { name?: unknown; code?: unknown; message?: unknown; cause?: Failure } | null;
  const failure = error as Failure;
  if (failure?.name === "TimeoutError" || failure?.cause?.name === "TimeoutError") {
    return { reason: `${input.supplier} did not answer within ${input.timeout_ms} ms`, sent: true };
  }
  const code = typeof failure?.cause?.code === "string" ? failure.cause.code : null;
  const never_sent = code === "ECONNREFUSED" || code === "ENOTFOUND" || code === "EAI_AGAIN";
  const detail = code ?? String(failure?.cause?.message ?? failure?.message ?? error);
  return { reason: `${input.supplier} unreachable: ${detail.slice(0, input.max_length)}`, sent: !never_sent };
}
