package dev.vigilo.exec.view;

import dev.vigilo.exec.Placements;
import dev.vigilo.exec.record.ChunkRows;
import dev.vigilo.exec.record.Receipt;
import dev.vigilo.exec.record.RunRecords;
import dev.vigilo.storage.ObjectStore;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.UUID;

/**
 * A run's executed cases in ordinal order, one {@link CaseOutcome} each: the done chunk rows in chunk order
 * ({@link ChunkRows#cursor}), each receipt read through its row's reference and checked against the row. Memory: one
 * page of rows per execution database and one receipt. Not thread-safe.
 */
final class CaseOutcomes implements Iterator<CaseOutcome> {
    private final UUID runId;
    private final ObjectStore store;
    private final Iterator<ChunkRows.Row> rows;
    private final Deque<CaseOutcome> current = new ArrayDeque<>();
    private List<String> gates;

    CaseOutcomes(Placements placements, UUID runId, List<RunRecords.Route> routes, ObjectStore store) {
        this.runId = runId;
        this.store = store;
        this.rows = ChunkRows.cursor(placements, runId, routes, true);
    }

    /** The run's gate names in gate order, as its receipts list them (empty until a receipt was read). */
    List<String> gates() {
        return gates == null ? List.of() : gates;
    }

    @Override
    public boolean hasNext() {
        while (current.isEmpty() && rows.hasNext()) {
            Receipt r = ChunkRows.receipt(runId, store, rows.next());
            if (gates == null) {
                gates = r.gates();
            }
            for (Receipt.CaseResult c : r.cases()) {
                byte[] outcomes = new byte[r.gates().size()];
                for (int g = 0; g < outcomes.length; g++) {
                    outcomes[g] = CaseOutcome.code(c.gates().get(r.gates().get(g)));
                }
                current.add(new CaseOutcome(c.id(), c.ordinal(), c.errored(), outcomes));
            }
        }
        return !current.isEmpty();
    }

    @Override
    public CaseOutcome next() {
        if (!hasNext()) {
            throw new NoSuchElementException();
        }
        return current.poll();
    }
}
