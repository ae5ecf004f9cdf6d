import type { Browser, BrowserContext } from "playwright-core";
import { PUBLIC_SANDBOX_KEY, TEST_PROFILES } from "@svc/domain";
import { GUIDES } from "../../services/gateway/src/pages/guide-table";
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

const pages = [{ slug: "guides", title: "Guides" }, ...GUIDES];

describe("the guides under /docs", () => {
  it.each(pages.map((g) => [g.slug, g.title]))("/docs/%s renders with its title, from the gateway alone, without errors", async (slug, title) => {
    const { page, watch } = await watchedPage(context, gw.url);
    const res = await page.goto(`${gw.url}/docs/${slug}`);
    expect(res?.status()).toBe(200);
    const policy = res?.headers()["content-security-policy"] ?? "";
    expect(policy).toContain("default-src 'none'");
    expect(policy).not.toMatch(/https?:|\*/);
    await expect(page.title()).resolves.toMatch(new RegExp(`^${title.replace(/[()]/g, "\\$&")} · `));
    const h1 = (await page.locator("main h1").innerText()).replace(/\s*#$/, "");
    expect(h1.length).toBeGreaterThan(0);
    // The same bar as the reference and the error codes, with its stylesheet applied (sticky).
    await expect(page.locator("nav.docs-nav a[href='/docs']").count()).resolves.toBe(1);
    await expect(page.locator("nav.docs-nav").evaluate((el) => getComputedStyle(el).position)).resolves.toBe("sticky");
    expect(watch.foreignRequests).toEqual([]);
    expect(watch.errors).toEqual([]);
  });

  it("every link on every guide page resolves, and every #section it names is on its page", async () => {
    const { page } = await watchedPage(context, gw.url);
    const checked = new Map<string, number>();
    const ids = new Map<string, Set<string>>();
    const wanted: Array<{ from: string; href: string }> = [];
    for (const { slug } of pages) {
      await page.goto(`${gw.url}/docs/${slug}`);
      ids.set(`/docs/${slug}`, new Set(await page.locator("[id]").evaluateAll((els) => els.map((e) => e.id))));
      for (const href of await page.locator("a[href]").evaluateAll((as) => as.map((a) => (a as HTMLAnchorElement).href))) wanted.push({ from: slug, href });
    }
    const foreign = wanted.filter((w) => !w.href.startsWith(`${gw.url}/`));
    // Other sites are linked (never fetched by the page): only over https.
    for (const f of foreign) expect(f.href).toMatch(/^https:\/\//);
    for (const { from, href } of wanted.filter((w) => w.href.startsWith(`${gw.url}/`))) {
      const url = new URL(href);
      if (!checked.has(url.pathname)) checked.set(url.pathname, (await gw.http().get(url.pathname)).status);
      expect({ from, href, status: checked.get(url.pathname) }).toEqual({ from, href, status: 200 });
      if (url.hash && ids.has(url.pathname)) expect({ from, href, found: ids.get(url.pathname)!.has(decodeURIComponent(url.hash.slice(1))) }).toEqual({ from, href, found: true });
    }
    expect(checked.size).toBeGreaterThan(GUIDES.length);
  }, 60_000);

  it("/docs/test-mode shows every documented test number and address", async () => {
    const { page } = await watchedPage(context, gw.url);
    await page.goto(`${gw.url}/docs/test-mode`);
    const cells = new Set(await page.locator("main td code").allInnerTexts());
    const values = TEST_PROFILES.map((p) => p.value);
    expect(values.length).toBeGreaterThan(10);
    for (const v of values) expect({ v, shown: cells.has(v) }).toEqual({ v, shown: true });
    await expect(page.locator("main").innerText()).resolves.toContain(PUBLIC_SANDBOX_KEY);
  });

  it("links between guides lead to the guide, at the section named", async () => {
    const { page, watch } = await watchedPage(context, gw.url);
    await page.goto(`${gw.url}/docs/cli`);
    await Promise.all([page.waitForURL(`${gw.url}/docs/bulk-and-csv`), page.locator("main a[href='/docs/bulk-and-csv']").first().click()]);
    await expect(page.locator("main h1").innerText()).resolves.toContain("Bulk jobs and CSV");
    await page.goto(`${gw.url}/docs/mcp`);
    await Promise.all([page.waitForURL(`${gw.url}/docs/errors`), page.locator("main a[href='/docs/errors']").first().click()]);
    expect(watch.errors).toEqual([]);
  });
});

describe("finding the guides", () => {
  it("/ leads to the API reference", async () => {
    const res = await gw.http().get("/").redirects(0);
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe("/docs");
    const { page } = await watchedPage(context, gw.url);
    await page.goto(`${gw.url}/`);
    expect(page.url()).toBe(`${gw.url}/docs`);
  });

  it("the reference's bar links the guides and test mode; the index links every guide", async () => {
    const { page, watch } = await watchedPage(context, gw.url);
    await page.goto(`${gw.url}/docs`);
    await expect(page.locator("nav.docs-nav a[href='/docs/test-mode']").count()).resolves.toBe(1);
    await Promise.all([page.waitForURL(`${gw.url}/docs/guides`), page.locator("nav.docs-nav a[href='/docs/guides']").click()]);
    for (const g of GUIDES) await expect(page.locator(`ul.guide-index a[href='/docs/${g.slug}']`).count()).resolves.toBe(1);
    expect(watch.errors).toEqual([]);
  });

  it("the error codes page links the guides", async () => {
    const { page } = await watchedPage(context, gw.url);
    await page.goto(`${gw.url}/docs/errors`);
    await expect(page.locator("nav.docs-nav a[href='/docs/guides']").count()).resolves.toBe(1);
    await expect(page.locator("main a[href='/docs/idempotency']").count()).resolves.toBe(1);
  });
});

describe("what the idempotency guide promises", () => {
  it("the same key and body is replayed; another body is 409 idempotency_key_reused", async () => {
    const send = (numbers: string[]) =>
      gw
        .http()
        .post("/v1/lookup")
        .set("Authorization", `Bearer ${PUBLIC_SANDBOX_KEY}`)
        .set("Idempotency-Key", "guide-idempotency-example")
        .send({ numbers, checks: ["number.spam"] });
    const first = await send(["+12025550100"]);
    expect(first.status).toBe(200);
    const again = await send(["+12025550100"]);
    expect(again.status).toBe(200);
    expect(again.headers["idempotent-replayed"]).toBe("true");
    expect(again.body.id).toBe(first.body.id);
    expect(again.headers["x-request-id"]).not.toBe(first.headers["x-request-id"]);
    const other = await send(["+12025550101"]);
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe("idempotency_key_reused");
  });
});
