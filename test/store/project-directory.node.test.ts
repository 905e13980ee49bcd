import { describe, it } from "node:test";
import { defineProjectDirectorySuite } from "./project-directory-suite.ts";

defineProjectDirectorySuite({ describe, it });
