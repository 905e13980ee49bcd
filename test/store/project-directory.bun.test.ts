import { describe, it } from "bun:test";
import { defineProjectDirectorySuite } from "./project-directory-suite.ts";

defineProjectDirectorySuite({ describe, it });
