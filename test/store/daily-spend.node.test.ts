import { describe, it } from "node:test";
import { defineDailySpendSuite } from "./daily-spend-suite.ts";

defineDailySpendSuite({ describe, it });
