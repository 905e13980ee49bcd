import { describe, it } from "bun:test";
import { defineSpendWriteBehindSuite } from "./spend-write-behind-suite.ts";

defineSpendWriteBehindSuite({ describe, it });
