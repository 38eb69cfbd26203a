// GET/PUT /v1/profile/branding and GET/PUT /v1/profile/notifications: what your travellers see from
// the service (your brand) and which emails they get.
import type { RequestOptions, Transport } from "../core/transport.ts";
import type {
  Branding,
  NotificationSettings,
  SetBrandingParams,
  SetNotificationSettingsParams,
} from "../types.ts";

export class Profile {
  readonly #transport: Transport;
  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /** Your brand as you set it, and `accent_color_applied`, the readable colour emails and pages use. */
  getBranding(options?: RequestOptions): Promise<Branding> {
    return this.#transport.request(
      { method: "GET", path: "/v1/profile/branding", idempotent: true },
      options,
    );
  }

  /**
   * Sets the fields given (null clears one); a bad field is an ApiError `invalid_request` naming it
   * and nothing is saved. Retried: setting the same values twice is harmless. `logo_png_base64`: a
   * PNG of at most 40 KiB as base64 (`Buffer.from(png).toString("base64")`).
   */
  setBranding(params: SetBrandingParams, options?: RequestOptions): Promise<Branding> {
    return this.#transport.request(
      { method: "PUT", path: "/v1/profile/branding", body: params, idempotent: true },
      options,
    );
  }

  getNotificationSettings(options?: RequestOptions): Promise<NotificationSettings> {
    return this.#transport.request(
      { method: "GET", path: "/v1/profile/notifications", idempotent: true },
      options,
    );
  }

  /** Sets the fields given; the others keep their value. Retried: the same values twice are harmless. */
  setNotificationSettings(
    params: SetNotificationSettingsParams,
    options?: RequestOptions,
  ): Promise<NotificationSettings> {
    return this.#transport.request(
      { method: "PUT", path: "/v1/profile/notifications", body: params, idempotent: true },
      options,
    );
  }
}
