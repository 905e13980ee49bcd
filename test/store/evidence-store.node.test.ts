import { describe, it } from "node:test";
import { defineEvidenceStoreSuite, defineEventMaskingSuite } from "./evidence-store-suite.ts";

defineEvidenceStoreSuite({ describe, it });
defineEventMaskingSuite({ describe, it });
