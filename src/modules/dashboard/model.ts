/** Form schemas, checked on the server (webhook forms reuse the API's schemas in `webhooks/model.ts`). */
import { Type as T } from "@sinclair/typebox";
import { PASSWORD_MAX_CHARS } from "../accounts/password-policy.ts";

const EMAIL_MAX = 254;

/** The sign-up email; the password policy (accounts/password-policy.ts) checks the password. */
export const SignUpForm = T.Object({
  email: T.String({ maxLength: EMAIL_MAX, pattern: "^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$" }),
});

export const SignInForm = T.Object({
  email: T.String({ minLength: 1, maxLength: EMAIL_MAX }),
  // TypeBox counts UTF-16 code units: twice the policy's code-point limit admits every password sign-up accepted.
  password: T.String({ minLength: 1, maxLength: 2 * PASSWORD_MAX_CHARS }),
});

export const KeyNameForm = T.Object({ name: T.String({ maxLength: 60, pattern: "^[^\\u0000-\\u001f\\u007f]*$" }) });
