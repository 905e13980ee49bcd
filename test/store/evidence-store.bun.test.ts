import { describe, it } from "bun:test";
import { defineEvidenceStoreSuite } from "./evidence-store-suite.ts";

defineEvidenceStoreSuite({ describe, it });
