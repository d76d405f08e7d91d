/**
 * The Kubernetes objects that `kubectl apply -k <dir>` would send: `kubectl kustomize` when kubectl is
 * installed (CI's machine has it), else the files listed in the kustomization's `resources` as they are
 * (kustomize's `images` and `replacements` not applied; `kustomized` says which).
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";

/** True when `kubectl kustomize` runs here. */
export const HAS_KUBECTL = spawnSync("kubectl", ["version", "--client"], { stdio: "ignore" }).status === 0;

function docs(text: string): any[] {
  const parsed = Bun.YAML.parse(text) as unknown;
  return (Array.isArray(parsed) ? parsed : [parsed]).filter((d) => d && typeof d === "object");
}

/** The rendered objects of the kustomization in `dir`. @throws when kubectl refuses it. */
export function renderKustomization(dir: string): { objects: any[]; kustomized: boolean } {
  if (HAS_KUBECTL) {
    const r = spawnSync("kubectl", ["kustomize", dir], { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`kubectl kustomize ${dir}: ${r.stderr}`);
    return { objects: docs(r.stdout), kustomized: true };
  }
  const k = Bun.YAML.parse(readFileSync(join(dir, "kustomization.yaml"), "utf8")) as { resources: string[] };
  return { objects: k.resources.flatMap((f) => docs(readFileSync(join(dir, f), "utf8"))), kustomized: false };
}
