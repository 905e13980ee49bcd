import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { defaultDbPath } from "../../src/store/default-db-path.ts";

describe("defaultDbPath", () => {
  it("lives under $XDG_DATA_HOME when it is set", () => {
    assert.equal(defaultDbPath({ XDG_DATA_HOME: "/data" }, "/home/u"), "/data/opencode-errands/errands.db");
  });

  it("falls back to ~/.local/share when XDG_DATA_HOME is unset, empty or relative", () => {
    const fallback = "/home/u/.local/share/opencode-errands/errands.db";
    assert.equal(defaultDbPath({}, "/home/u"), fallback);
    assert.equal(defaultDbPath({ XDG_DATA_HOME: "" }, "/home/u"), fallback);
    assert.equal(defaultDbPath({ XDG_DATA_HOME: "relative/dir" }, "/home/u"), fallback);
  });
});
