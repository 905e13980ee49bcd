import { describe, it } from "node:test";
import { defineSpendWriteBehindSuite } from "./spend-write-behind-suite.ts";

defineSpendWriteBehindSuite({ describe, it });
