import { describe, it } from "bun:test";
import { defineAutomationStoreSuite } from "./automation-store-suite.ts";

defineAutomationStoreSuite({ describe, it });
