import { describe, it } from "node:test";
import { defineProjectRepositorySuite } from "./project-repository-suite.ts";

defineProjectRepositorySuite({ describe, it });
