import { describe, it } from "node:test";
import { defineEvidenceStoreSuite } from "./evidence-store-suite.ts";

defineEvidenceStoreSuite({ describe, it });
