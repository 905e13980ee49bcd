import { describe, it } from "bun:test";
import { defineClaimsSuite } from "./claims-suite.ts";

defineClaimsSuite({ describe, it });
