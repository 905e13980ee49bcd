import { describe, it } from "bun:test";
import { defineEvidenceStoreSuite, defineEventMaskingSuite } from "./evidence-store-suite.ts";

defineEvidenceStoreSuite({ describe, it });
defineEventMaskingSuite({ describe, it });
