import type express from "express";
import type { Deps } from "../deps";
import { errorsPage, referencePage, testKeyPage } from "./pages";

/**
 * The pages people read in a browser, beside the API: get a test key (its form,
 * script, proof-of-work solver and worker, stylesheet), the API reference and its
 * assets, and the error codes every `doc_url` points at. No key, no JSON.
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
}
