import { describe, it } from "bun:test";
import { defineClaimConformanceSuite } from "./claim-conformance-suite.ts";

defineClaimConformanceSuite({ describe, it });
