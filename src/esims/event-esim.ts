// An event's data is the Esim as rendered, but record-event.ts bounds an event's data (MAX_DATA_BYTES: it
// is stored and delivered to webhooks). An eSIM topped up very many times would not fit: the event
// carries the newest MAX_EVENT_BUNDLES bundles and `bundles_truncated: true`; GET /v1/esims/{iccid}
// still has them all. Without this, recording the event would throw inside applySignal and the
// eSIM could never be updated again.
import type { EsimBody } from "./render-esim.ts";

/** About 220 bytes per rendered bundle: 100 keep the data near 22 KiB, well under the bound. */
export const MAX_EVENT_BUNDLES = 100;

export type EventEsim = EsimBody & { bundles_truncated?: true };

export function eventEsim(esim: EsimBody): EventEsim {
  if (esim.bundles.length <= MAX_EVENT_BUNDLES) return esim;
  // Bundles are oldest first: the newest are the last ones.
  return { ...esim, bundles: esim.bundles.slice(-MAX_EVENT_BUNDLES), bundles_truncated: true };
}
