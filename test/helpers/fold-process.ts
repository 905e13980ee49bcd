// One process folding a database's run history: two of these at once must not count a run twice
// (test/unit/run-history-fold.test.ts).
import { Store } from "../../src/store/store.ts";

const [path, projectId, keepRuns, now, rounds] = process.argv.slice(2);
const store = Store.open({ path: path!, projectId: projectId! });
let folded = 0;
for (let i = 0; i < Number(rounds); i++) folded += await store.runHistory.fold({ keepRuns: Number(keepRuns), now: Number(now) });
store.close();
process.stdout.write(String(folded));
