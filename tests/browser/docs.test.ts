import type { Browser, BrowserContext } from "playwright-core";
import { readFileSync } from "node:fs";
import path from "node:path";
import { codeSamples, ERROR_CODES, ERROR_GUIDANCE, RECORDED_CALLS, ROUTES, type RecordedCall } from "@svc/contract";
import { PUBLIC_SANDBOX_KEY } from "@svc/domain";
import { startTestGateway, type TestGateway } from "../support/gateway";
import { launchChromium, watchedPage } from "./chromium";

let gw: TestGateway;
let browser: Browser;
let context: BrowserContext;

beforeAll(async () => {
  [gw, browser] = await Promise.all([startTestGateway(), launchChromium()]);
  context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
}, 60_000);

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await gw?.close();
});

const tagSlug = (tag: string) => tag.toLowerCase().replace(/[^a-z0-9]+/g, "-");

describe("/docs: the API reference", () => {
  it("lists every operation of the contract, rendered from /v1/openapi.json by the bundle the gateway serves", async () => {
    const { page, watch } = await watchedPage(context, gw.url);
    const documentFetched = page.waitForResponse((r) => r.url() === `${gw.url}/v1/openapi.json` && r.status() === 200);
    const res = await page.goto(`${gw.url}/docs`);
    expect(res?.status()).toBe(200);
    const policy = res?.headers()["content-security-policy"] ?? "";
    expect(policy).toContain("default-src 'none'");
    expect(policy).toContain("script-src 'self'");
    expect(policy).not.toMatch(/https?:|\*/);
    await documentFetched;

    const sidebar = page.locator("a[href^='#tag/']");
    await sidebar.first().waitFor({ timeout: 20_000 });
    for (const route of ROUTES) {
      // One entry per operation in the sidebar, titled by its summary, with its method…
      const entry = page.locator(`a[href='#tag/${tagSlug(route.tag)}/${route.operationId}']`);
      await expect(entry.count()).resolves.toBe(1);
      const label = await entry.innerText();
      expect(label).toContain(route.summary);
      expect(label).toContain(route.method === "delete" ? "DEL" : route.method.toUpperCase());
      // …which opens the operation, with its operationId and path.
      await entry.click();
      const selector = `[id$='tag/${tagSlug(route.tag)}/${route.operationId}']`;
      await page.waitForFunction(([sel, id]) => (document.querySelector(sel) as HTMLElement | null)?.innerText.includes(id) ?? false, [selector, route.operationId] as const, { timeout: 10_000 });
      expect(await page.locator(selector).innerText()).toContain(route.path);
    }
    // The events too.
    for (const type of ["lookup.completed", "job.completed", "webhook.verification"]) await expect(page.locator(`a[href='#webhook/webhook-${type}']`).count()).resolves.toBe(1);

    expect(watch.foreignRequests).toEqual([]);
    expect(watch.errors).toEqual([]);
  }, 90_000);

  /** A value of the operation's recorded 2xx answer that no generator invents: an id, a test number or address, a time. */
  function realValue(call: RecordedCall): string | null {
    if (call.response === null) return null;
    if (typeof call.response === "string") return call.response.slice(0, 40);
    const leaves: string[] = [];
    const walk = (v: unknown): void => {
      if (typeof v === "string") leaves.push(v);
      else if (v && typeof v === "object") Object.values(v).forEach(walk);
    };
    walk(call.response);
    return leaves.find((v) => /^(lkp|job|we|acct|evt)_|^\+\d{6,}|@|^\d{4}-\d\d-\d\d/.test(v)) ?? leaves.find((v) => v.length > 3) ?? null;
  }

  it("shows, for every operation, its recorded example and our own samples (curl, TypeScript SDK, CLI), never a placeholder", async () => {
    const { page, watch } = await watchedPage(context, gw.url);
    await page.goto(`${gw.url}/docs`);
    await page.locator("a[href^='#tag/']").first().waitFor({ timeout: 20_000 });
    const firsts = new Map<string, RecordedCall>();
    for (const call of RECORDED_CALLS) if (call.status < 300 && !firsts.has(call.operationId)) firsts.set(call.operationId, call);
    for (const route of ROUTES.filter((r) => r.operationId !== "getOpenApi")) {
      const call = firsts.get(route.operationId)!;
      await page.locator(`a[href='#tag/${tagSlug(route.tag)}/${route.operationId}']`).click();
      const section = page.locator(`[id$='tag/${tagSlug(route.tag)}/${route.operationId}']`).first();
      await section.locator("[data-testid='client-picker']").waitFor({ timeout: 10_000 });
      const text = await section.innerText();
      // The answer shown is the recorded one, not a generated `"string"`.
      const value = realValue(call);
      if (value !== null) expect([route.operationId, text.includes(value)]).toEqual([route.operationId, true]);
      // (GET /v1/services answers attribute types, "string" among them: a real value there.)
      const placeholders = ['"string"', '"^(.*)$"', '"https://example.com"'].filter((p) => !JSON.stringify(call.response).includes(p));
      expect([route.operationId, placeholders.filter((p) => text.includes(p))]).toEqual([route.operationId, []]);
      // The curl sample shows the sandbox key itself (prefilled, public), not "·····".
      if (call.key === "sandbox") {
        const shown = await section.locator(".credential .credential-value").first().evaluate((el) => ({ text: el.textContent, size: getComputedStyle(el).fontSize, after: getComputedStyle(el.parentElement!, "::after").content }));
        expect([route.operationId, shown.text, shown.size !== "0px", shown.after]).toEqual([route.operationId, PUBLIC_SANDBOX_KEY, true, "none"]);
      }
      // Our samples, each selectable; Scalar's generic clients are hidden.
      for (const sample of codeSamples(call, gw.url)) {
        if (sample.label === "MCP tool") continue;
        await section.locator("[data-testid='client-picker']").click();
        const options = page.getByRole("option");
        const labels = await options.allInnerTexts();
        expect([route.operationId, labels.map((l) => l.trim())]).toEqual([route.operationId, codeSamples(call, gw.url).map((s) => s.label)]);
        await page.getByRole("option", { name: sample.label, exact: true }).click();
        const firstLine = sample.source.split("\n").find((l) => !l.startsWith("#") && !l.startsWith("//") && !l.includes(PUBLIC_SANDBOX_KEY))!;
        await page.waitForFunction(([sel, line]) => (document.querySelector(sel) as HTMLElement | null)?.innerText.includes(line) ?? false, [`[id$='tag/${tagSlug(route.tag)}/${route.operationId}']`, firstLine] as const, { timeout: 5_000 });
      }
    }
    expect(watch.errors).toEqual([]);
  }, 180_000);

  it("prefills the public sandbox key: the mount's data-sandbox-key is PUBLIC_SANDBOX_KEY", async () => {
    const html = readFileSync(path.resolve(__dirname, "..", "..", "services", "gateway", "assets", "docs", "reference.html"), "utf8");
    expect(/data-sandbox-key="([^"]*)"/.exec(html)?.[1]).toBe(PUBLIC_SANDBOX_KEY);
    const served = await gw.http().get("/docs");
    expect(served.text).toContain(`data-sandbox-key="${PUBLIC_SANDBOX_KEY}"`);
  });

  it("links the error codes page, and the link works", async () => {
    const { page, watch } = await watchedPage(context, gw.url);
    await page.goto(`${gw.url}/docs`);
    // From the page's own navigation and from the document's description (its public base URL).
    await expect(page.locator("nav.docs-nav a[href='/docs/errors']").count()).resolves.toBe(1);
    const fromDocument = page.locator(`.scalar-app a[href='${gw.url}/docs/errors'], #reference a[href='${gw.url}/docs/errors']`).first();
    await fromDocument.waitFor({ timeout: 20_000 });
    await Promise.all([page.waitForURL(`${gw.url}/docs/errors`), page.locator("nav.docs-nav a[href='/docs/errors']").click()]);
    await expect(page.locator("h1").innerText()).resolves.toBe("Error codes");
    expect(watch.errors).toEqual([]);
  }, 60_000);

  it("serves the renderer gzipped to browsers that take it", async () => {
    const gz = await gw.http().get("/docs/assets/scalar-api-reference.js").set("Accept-Encoding", "gzip");
    expect(gz.status).toBe(200);
    expect(gz.headers["content-encoding"]).toBe("gzip");
    expect(gz.headers["content-type"]).toMatch(/javascript/);
    const plain = await gw.http().get("/docs/assets/scalar-api-reference.js").set("Accept-Encoding", "identity");
    expect(plain.headers["content-encoding"]).toBeUndefined();
    expect(plain.text.length).toBeGreaterThan(1_000_000);
    expect((await gw.http().get("/docs/assets/nothing-here.js")).status).toBe(404);
  });
});

describe("/docs/errors: where every doc_url points", () => {
  const codes = Object.keys(ERROR_CODES) as Array<keyof typeof ERROR_CODES>;

  it("renders the guidance's `code` as <code> and escapes the rest", async () => {
    const { page, watch } = await watchedPage(context, gw.url);
    await page.goto(`${gw.url}/docs/errors`);
    const rows = await page.locator("tbody tr").evaluateAll((trs) => trs.map((tr) => ({ id: tr.id, cells: [...tr.querySelectorAll("td")].map((td) => td.innerHTML) })));
    expect(rows.map((r) => r.id)).toEqual(codes);
    for (const { id, cells } of rows) {
      const guidance = ERROR_GUIDANCE[id as keyof typeof ERROR_CODES];
      const meaning = cells[3] ?? "";
      expect([id, meaning.includes("`")]).toEqual([id, false]);
      for (const [, code] of guidance.matchAll(/`([^`]+)`/g)) expect(meaning).toContain(`<code>${code}</code>`);
    }
    // invalid_request says "`param` names the field": shown as code, not as backticks.
    await expect(page.locator("#invalid_request td code", { hasText: /^param$/ }).count()).resolves.toBe(1);
    expect(watch.errors).toEqual([]);
  });

  it.each([["not_found"], ["temporarily_unavailable"], ["idempotency_key_reused"]])("/docs/errors#%s scrolls that code's row into view", async (code) => {
    const { page, watch } = await watchedPage(context, gw.url);
    await page.setViewportSize({ width: 1000, height: 420 });
    await page.goto(`${gw.url}/docs/errors#${code}`);
    const row = page.locator(`tr#${code}`);
    await expect(row.evaluate((el) => el.matches(":target"))).resolves.toBe(true);
    // Fully inside the viewport and not under the sticky navigation bar.
    const where = await row.evaluate((el) => {
      const box = el.getBoundingClientRect();
      const nav = document.querySelector("nav.docs-nav")?.getBoundingClientRect();
      return { top: box.top, bottom: box.bottom, navBottom: nav?.bottom ?? 0, height: window.innerHeight, scrolled: window.scrollY };
    });
    expect(where.scrolled).toBeGreaterThan(0);
    expect(where.top).toBeGreaterThanOrEqual(where.navBottom);
    expect(where.bottom).toBeLessThanOrEqual(where.height);
    await expect(row.isVisible()).resolves.toBe(true);
    expect(watch.errors).toEqual([]);
  });

  it("is where an error's doc_url leads", async () => {
    const res = await gw.http().get("/v1/no-such-path");
    expect(res.status).toBe(404);
    const docUrl: string = res.body.error.doc_url;
    expect(docUrl).toBe(`${gw.url}/docs/errors#not_found`);
    const { page } = await watchedPage(context, gw.url);
    await page.setViewportSize({ width: 1000, height: 420 });
    await page.goto(docUrl);
    await expect(page.locator("tr#not_found").evaluate((el) => el.matches(":target"))).resolves.toBe(true);
    await expect(page.locator("tr#not_found").isVisible()).resolves.toBe(true);
  });
});
