import { defineConfig } from "drizzle-kit";

// `bun run db:generate` writes SQL migrations into drizzle/ from src/db/schema.
export default defineConfig({
  dialect: "postgresql",
  schema: "./src/db/schema/index.ts",
  out: "./drizzle",
});
