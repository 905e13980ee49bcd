import { describe, it } from "node:test";
import { defineAutomationRepositorySuite } from "./automation-repository-suite.ts";

defineAutomationRepositorySuite({ describe, it });
