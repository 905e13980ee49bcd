import { describe, it } from "bun:test";
import { defineAutomationRepositorySuite } from "./automation-repository-suite.ts";

defineAutomationRepositorySuite({ describe, it });
