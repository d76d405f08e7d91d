/** The sign-up password policy (NIST SP 800-63B 5.1.1.2), as a function and on the form. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { accounts } from "../../src/db/schema/index.ts";
import { isCommonPassword, PASSWORD_MESSAGES, passwordProblem } from "../../src/modules/accounts/password-policy.ts";
import { testContext, type TestContext } from "../helpers/app.ts";
import { Client } from "./support.ts";

const EMAIL = "Priya.Sharma@example.com";

describe("passwordProblem", () => {
  test.each([
    ["aaaaaaaaaa", "repeated"],
    ["password12", "common"],
    [" ".repeat(10), "whitespace"],
    ["\t \u00a0 \u3000   \n ", "whitespace"],
    [EMAIL, "contains_email"],
    [EMAIL.toLowerCase(), "contains_email"],
    ["my PRIYA.SHARMA pass", "contains_email"],
    ["P@ssw0rd123", "common"], // l33t spelling of a listed password
    ["21drowssap", "common"], // reversed
    ["Password123", "common"], // capitalised
    ["trustno1trustno1", "common"], // a listed password repeated
    ["abcabcabcabc", "common"], // a short unit repeated
    ["qwertyuiop", "common"],
    ["1234567890", "common"],
    ["short", "too_short"],
    ["🐘🐘🐘🐘🐘", "too_short"], // 10 UTF-16 units, 5 characters: length counts code points
    ["x".repeat(100) + "y".repeat(29), "too_long"],
  ] as const)("%p → %s", async (password, problem) => {
    expect(await passwordProblem(password, EMAIL)).toBe(problem);
  });

  test.each(["correct horse battery", "Tr0ub4dor&3xx", "🐘🦒🦓🐅🐆🦏🦛🐪🐫🦙", "zebrafish77", "sharma-is-my-surname"])(
    "%p is accepted",
    async (password) => {
      // The local part is "priya.sharma": "sharma" alone is not the email.
      expect(await passwordProblem(password, EMAIL)).toBeUndefined();
    },
  );

  test("a local part shorter than 3 characters is not checked; the whole email still is", async () => {
    expect(await passwordProblem("jo-jo-jo-bananas", "jo@example.com")).toBeUndefined();
    expect(await passwordProblem("xxJO@example.comxx", "jo@example.com")).toBe("contains_email");
  });

  // A listed password with something predictable added at an end, in any case.
  test.each([
    "Password123!",
    "iloveyou123",
    "welcome12345",
    "Password1!",
    "password2024",
    "2024password",
    "!!password!!",
    "Qwerty2024!!",
    "qwerty!!!!!!!!",
    "Dragon1987!",
    "MONKEY12345",
    "letmein2023!",
    "Football#1234",
    "sunshine2020",
    "Princess123",
    "Baseball99!!",
    "Superman007",
    "Trustno1!!!",
    "Summer2024!",
    "Shadow12345",
    "master1234!",
    "passwordddd1",
    "P@ssw0rd2024",
    "123456dragon",
    "Iloveyou!!!!",
    "football1234567890",
    "WELCOME2025!",
    "michael1985",
    "Jennifer123",
    "Starwars77!!",
  ])("%p → common (a listed password with an affix)", async (password) => {
    expect(await isCommonPassword(password)).toBe(false); // not a whole-string match: the affix check is what refuses it
    expect(await passwordProblem(password, EMAIL)).toBe("common");
  });

  test.each([
    "dragon-8472-91827364",
    "violet kettle 1987 orbit",
    "Xk9#mQ2vL7pW",
    "7491-tangerine-blimp",
    "zebrafish77",
  ])(
    "%p is accepted: an affix too long and too random to take off, or no listed password under it",
    async (password) => {
      expect(await passwordProblem(password, EMAIL)).toBeUndefined();
    },
  );

  test("common words inside a longer password do not make it common", async () => {
    expect(await isCommonPassword("monkey dragon sunshine")).toBe(false);
    expect(await isCommonPassword("iloveyou")).toBe(true);
  });
});

describe("on the sign-up form", () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await testContext();
  });
  afterAll(() => ctx.close());

  let n = 0;
  test.each([
    ["aaaaaaaaaa", PASSWORD_MESSAGES.repeated],
    ["password12", PASSWORD_MESSAGES.common],
    [" ".repeat(10), PASSWORD_MESSAGES.whitespace],
    ["<email>", PASSWORD_MESSAGES.contains_email],
  ])("%p is refused with the reason next to the field; no account is created", async (password, message) => {
    const email = `policy${++n}-${Bun.randomUUIDv7().slice(-6)}@example.com`;
    const c = new Client(ctx.app);
    const csrf = await c.csrf("/dashboard/sign-up");
    const [res, html] = await c.post("/dashboard/sign-up", {
      _csrf: csrf,
      email,
      password: password === "<email>" ? email : password,
    });
    expect(res.status).toBe(422);
    expect(res.headers.get("content-type")).toStartWith("text/html");
    const escaped = message.replaceAll("'", "&#39;");
    expect(html).toContain(`<p class="field-error" id="password-error">${escaped}</p>`);
    expect(html).toContain('aria-invalid="true"');
    expect(html).toContain(`value="${email}"`); // the email is kept, the password is not
    expect(await ctx.tdb.db.select().from(accounts).where(eq(accounts.email, email))).toHaveLength(0);
  });

  test("a good password passes", async () => {
    const c = new Client(ctx.app);
    await c.signUp(`policy-ok-${Bun.randomUUIDv7().slice(-6)}@example.com`, "a slow green tractor");
    expect(c.jar.has("ct_session")).toBe(true);
  }, 30_000);
});
