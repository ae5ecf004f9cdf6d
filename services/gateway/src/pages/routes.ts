import type express from "express";
import type { Deps } from "../deps";
import { GUIDES } from "./guide-table";
import { errorsPage, guidePages, referencePage, testKeyPage } from "./pages";

/**
 * The pages people read in a browser, beside the API: get a test key (its form,
 * script, proof-of-work solver and worker, stylesheet), the API reference and its
 * assets, the error codes every `doc_url` points at, and the guides (GUIDES in
 * guide-table.ts) with their index. `/` leads to the reference. No key, no JSON.
 */
export function mountPages(app: express.Express, deps: Pick<Deps, "config" | "logger">): void {
  const testKey = testKeyPage(deps);
  app.get("/get-test-key", testKey.page);
  app.get("/get-test-key.js", testKey.script);
  app.get("/get-test-key/pow-solver.js", testKey.solver);
  app.get("/get-test-key/pow-worker.js", testKey.worker);
  app.get("/get-test-key.css", testKey.stylesheet);
  const reference = referencePage(deps);
  app.get("/docs", reference.page);
  app.get("/docs/errors", errorsPage());
  app.get("/docs/assets/:name", reference.asset);
  const guides = guidePages(deps);
  app.get("/docs/guides", guides.index);
  for (const guide of GUIDES) if (guide.source) app.get(`/docs/${guide.slug}`, guides.page(guide.slug));
  app.get("/", (_req, res) => res.redirect(302, "/docs"));
}
