/** Each request's one deadline for its database waits (docs/deployment.md, "When the database does not answer"). */
import { Deadline, withDeadline } from "../lib/deadline.ts";
import type { Fetch } from "./server.ts";

/**
 * Wraps `fetch` so each request runs under a new {@link Deadline} of `budgetMs` (ms), closed once its answer is
 * produced (a streamed body's later reads have none). Outermost, so the key lookup counts against it too.
 */
export function withRequestDeadline(fetch: Fetch, budgetMs: number): Fetch {
  return (request) => {
    const deadline = new Deadline(budgetMs);
    let answer: ReturnType<Fetch>;
    try {
      answer = withDeadline(deadline, () => fetch(request));
    } catch (err) {
      deadline.close();
      throw err;
    }
    if (!(answer instanceof Promise)) {
      deadline.close();
      return answer;
    }
    return answer.finally(() => deadline.close());
  };
}
