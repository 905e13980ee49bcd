import { describe, it } from "node:test";
import { defineStoreSuite } from "./store-suite.ts";

defineStoreSuite({ describe, it });
