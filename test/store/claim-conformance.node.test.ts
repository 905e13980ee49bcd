import { describe, it } from "node:test";
import { defineClaimConformanceSuite } from "./claim-conformance-suite.ts";

defineClaimConformanceSuite({ describe, it });
