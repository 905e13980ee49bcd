import { describe, it } from "node:test";
import { defineAutomationStoreSuite } from "./automation-store-suite.ts";

defineAutomationStoreSuite({ describe, it });
