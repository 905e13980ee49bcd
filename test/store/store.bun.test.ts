import { describe, it } from "bun:test";
import { defineStoreSuite } from "./store-suite.ts";

defineStoreSuite({ describe, it });
