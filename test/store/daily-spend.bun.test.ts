import { describe, it } from "bun:test";
import { defineDailySpendSuite } from "./daily-spend-suite.ts";

defineDailySpendSuite({ describe, it });
