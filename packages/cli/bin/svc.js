#!/usr/bin/env node
// The `svc` command. A committed launcher, so npm links the binary at install time,
// before `npm run build` has produced dist/ (the program itself, bundled, is dist/svc.js).
require("../dist/svc.js");
