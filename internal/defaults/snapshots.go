package defaults

// SnapshotEvery is how many journal entries a pass goes between durable snapshots of its
// guest (engine.Config.SnapshotEvery): a recovery replays at most this many. A snapshot of a
// small guest costs 0.2-0.6 ms to take and a few KB to store (host/snapshot/RATIONALE.md),
// a replayed entry 1-26 µs and a journal row: every 100 entries keeps both a few µs an entry.
const SnapshotEvery = 100

// JournalWindow is the most journal entries one claim reads per run
// (engine.Config.JournalWindow); a replay reads the rest a page at a time. At the step cap
// (MaxStepsPerRun, 100,000) a claim of 32 runs would otherwise read 3.2 million rows at once.
const JournalWindow = 1000
