#!/bin/sh
# Assembles in $1 what the image runs: built output and production dependencies,
# nothing else (no TypeScript sources, tests, tsconfig or build tooling).
#
# Run from the root of a built checkout with every dependency installed (after
# `npm ci` and `npm run build`): docker/Dockerfile's build stage does, and
# tests/deploy/docker.test.ts does the same against a copy. The checkout itself is
# not changed: the copy in $1 is pruned to production dependencies, not the source.
set -eu
out="${1:?usage: docker/runtime-files.sh OUTPUT_DIR}"
[ -d node_modules ] || { echo "runtime-files: no node_modules here (run npm ci first)" >&2; exit 1; }
[ -f services/gateway/dist/main.js ] || { echo "runtime-files: nothing built here (run npm run build first)" >&2; exit 1; }
mkdir -p "$out/scripts" "$out/docker"

# Root: the workspace manifest and lock (npm prune below needs both), the Prisma
# schema and migrations, what `node scripts/prisma.mjs migrate deploy` runs, the
# database deploy around it (scripts/db-deploy.mjs: migrations, then each service's
# login role) and the Redis ACL file writer (scripts/redis-acl.mjs); both of these
# load the built packages (packages/*/dist) copied below.
cp -a package.json package-lock.json prisma "$out/"
cp -a scripts/prisma.mjs scripts/prisma-wasm-timers.cjs scripts/db-deploy.mjs scripts/redis-acl.mjs scripts/service-settings.mjs scripts/partition-upkeep.mjs "$out/scripts/"
cp -a docker/healthcheck.cjs "$out/docker/"
# The Prisma CLI's configuration, compiled: the CLI reads prisma.config.mjs as well
# as .ts, and the image ships no TypeScript. ES module output: as CommonJS the CLI's
# loader sees `__esModule` beside the config and rejects it. esbuild is a
# devDependency, so it runs here, on the full checkout.
node_modules/.bin/esbuild prisma.config.ts --format=esm --platform=node --target=node20 \
  --log-level=warning --outfile="$out/prisma.config.mjs"

# Each workspace: its manifest and dist/ only (no src/, no tests, no tsconfig).
for dir in packages/* services/*; do
  [ -f "$dir/package.json" ] || continue
  mkdir -p "$out/$dir"
  cp -a "$dir/package.json" "$out/$dir/"
  if [ -d "$dir/dist" ]; then cp -a "$dir/dist" "$out/$dir/"; fi
done
# Pages and the API reference the gateway serves (read at run time).
cp -a services/gateway/assets "$out/services/gateway/"

# Dependencies: all of node_modules (the workspace links point at packages/* and
# services/* above; the generated Prisma client is in node_modules/.prisma), then
# pruned to production dependencies in the copy.
cp -a node_modules "$out/"
(cd "$out" && npm prune --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error)
# TypeScript stays after the prune as a peer of Prisma and valibot; it is for their
# types only and nothing in the image compiles (about 30 MB with its native binary).
rm -rf "$out/node_modules/typescript" "$out/node_modules/@typescript" "$out/node_modules/.bin/tsc" "$out/node_modules/.bin/tsserver"
# Scope directories the prune emptied.
find "$out/node_modules" -mindepth 1 -maxdepth 1 -type d -name '@*' -empty -delete

# Build leftovers that are not code to run: compiler state, compiled tests, source
# maps of tests, and TypeScript declarations (nothing in the image compiles).
find "$out/packages" "$out/services" -type f \( -name '*.tsbuildinfo' -o -name '*.test.js' -o -name '*.test.js.map' \
  -o -name '*.d.ts' -o -name '*.d.cts' -o -name '*.d.mts' -o -name '*.d.ts.map' \) -delete
# Test-only helpers compiled into some packages (e.g. a test certificate authority).
find "$out/packages" "$out/services" -type d \( -name testing -o -name __tests__ \) -path '*/dist/*' -prune -exec rm -rf {} +
