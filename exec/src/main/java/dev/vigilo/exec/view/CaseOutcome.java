package dev.vigilo.exec.view;

import dev.vigilo.exec.record.Receipt;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * What {@code run compare} needs of one executed case: its id, ordinal, whether the agent errored, and its outcome
 * per gate of its run (in the run's gate order; {@link #NOT_SELECTED} when the gate does not select it). Small and
 * serializable, so runs of any size can be sorted by id on disk ({@link ExternalIdSort}).
 */
record CaseOutcome(String id, long ordinal, boolean errored, byte[] gates) {
    static final byte NOT_SELECTED = 0;
    static final byte PASSED = 1;
    static final byte FAILED = 2;
    static final byte ERRORED = 3;

    CaseOutcome {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(gates, "gates");
    }

    static byte code(Receipt.GateOutcome o) {
        if (o == null) {
            return NOT_SELECTED;
        }
        return switch (o) {
            case PASSED -> PASSED;
            case FAILED -> FAILED;
            case ERRORED -> ERRORED;
        };
    }

    static String wire(byte code) {
        return switch (code) {
            case PASSED -> "passed";
            case FAILED -> "failed";
            case ERRORED -> "errored";
            default -> null;
        };
    }

    /** Bytes this record holds in memory, roughly (for the sort's budget). */
    long weight() {
        return 64L + 2L * id.length() + gates.length;
    }

    void write(DataOutputStream out) throws IOException {
        byte[] b = id.getBytes(StandardCharsets.UTF_8);
        out.writeInt(b.length);
        out.write(b);
        out.writeLong(ordinal);
        out.writeBoolean(errored);
        out.writeByte(gates.length);
        out.write(gates);
    }

    /** @return the next record, or null at the end of the stream */
    static CaseOutcome read(DataInputStream in) throws IOException {
        int n;
        try {
            n = in.readInt();
        } catch (EOFException e) {
            return null;
        }
        byte[] b = in.readNBytes(n);
        if (b.length != n) {
            throw new EOFException("truncated record");
        }
        long ordinal = in.readLong();
        boolean errored = in.readBoolean();
        byte[] gates = in.readNBytes(in.readUnsignedByte());
        return new CaseOutcome(new String(b, StandardCharsets.UTF_8), ordinal, errored, gates);
    }
}
