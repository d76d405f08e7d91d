/**
 * Form schemas (validated on the server; the browser's own checks are only a
 * convenience). Webhook forms reuse the API's own schemas from
 * `webhooks/model.ts`, so the dashboard and the API accept the same values.
 */
import { Type as T } from "@sinclair/typebox";

export const EMAIL_MAX = 254;
export const PASSWORD_MIN = 10;
/** Upper bound keeps argon2 work per request bounded. */
export const PASSWORD_MAX = 128;

export const SignUpForm = T.Object({
  email: T.String({ maxLength: EMAIL_MAX, pattern: "^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$" }),
  password: T.String({ minLength: PASSWORD_MIN, maxLength: PASSWORD_MAX }),
});

export const SignInForm = T.Object({
  email: T.String({ minLength: 1, maxLength: EMAIL_MAX }),
  password: T.String({ minLength: 1, maxLength: PASSWORD_MAX }),
});

export const KeyNameForm = T.Object({ name: T.String({ maxLength: 60, pattern: "^[^\\u0000-\\u001f\\u007f]*$" }) });
