import { describe, it } from "bun:test";
import { defineProjectRepositorySuite } from "./project-repository-suite.ts";

defineProjectRepositorySuite({ describe, it });
