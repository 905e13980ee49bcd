import { describe, it } from "node:test";
import { defineClaimsSuite } from "./claims-suite.ts";

defineClaimsSuite({ describe, it });
