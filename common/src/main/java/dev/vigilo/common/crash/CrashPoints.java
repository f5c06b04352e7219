package dev.vigilo.common.crash;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * Durable boundaries of Vigilo's protocols, and a test mode that stops the process exactly at one of them.
 *
 * <p>A durable boundary is a point between two durable effects: an fsync, a rename, an object PUT, an SQL commit, a
 * Lance put. Protocol code calls {@link #boundary} right before each such effect and after the last effect of a
 * step, before the step is acknowledged; so halting at every boundary of a workload visits every state its durable
 * storage can be left in by a crash between effects (a crash inside one effect is what the effect's own atomicity,
 * and the random {@code kill -9} tests, cover).
 *
 * <p>Normally {@link #boundary} does nothing (a check of a constant). Crash tests start a JVM with system
 * properties:
 *
 * <ul>
 *   <li>{@value #HALT_AT_PROPERTY}{@code =N}: the N-th boundary this process reaches (1-based, counted across
 *       threads) ends it with {@link Runtime#halt} and status {@value #HALT_STATUS}: no shutdown hooks, no finally
 *       blocks, no buffered output flushed, which is what a {@code kill -9} leaves at that point. A thread that
 *       reaches a later boundary meanwhile stops there, so no further durable effect starts.
 *   <li>{@value #TRACE_PROPERTY}{@code =FILE}: appends one line {@code N NAME} per boundary reached to FILE, written
 *       before the boundary returns (or halts), so a test counts and names the boundaries of a workload.
 * </ul>
 *
 * <p>The state (a counter and the trace file) is static on purpose: boundaries sit deep inside protocol code that
 * must not carry a test object through its public API. It exists only in test mode and is fixed when this class is
 * initialized.
 */
public final class CrashPoints {
    /** System property: halt at the N-th boundary (1-based). */
    public static final String HALT_AT_PROPERTY = "vigilo.crash.halt-at";
    /** System property: append every boundary reached to this file. */
    public static final String TRACE_PROPERTY = "vigilo.crash.trace";
    /** The exit status of a process halted at a boundary (no Vigilo command exits with it). */
    public static final int HALT_STATUS = 86;

    private static final Mode MODE = Mode.fromSystemProperties();

    private CrashPoints() {}

    /**
     * Marks a durable boundary. {@code name} says where ({@code module.effect}, e.g. {@code checkpoint.put}; an
     * effect's completion {@code module.effect.done}); it appears only in traces.
     */
    public static void boundary(String name) {
        if (MODE != null) {
            MODE.reached(name);
        }
    }

    /** Whether this JVM runs in crash-test mode. */
    public static boolean enabled() {
        return MODE != null;
    }

    private static final class Mode {
        private final long haltAt;
        private final OutputStream trace;
        private final AtomicLong reached = new AtomicLong();

        private Mode(long haltAt, OutputStream trace) {
            this.haltAt = haltAt;
            this.trace = trace;
        }

        static Mode fromSystemProperties() {
            String at = System.getProperty(HALT_AT_PROPERTY);
            String file = System.getProperty(TRACE_PROPERTY);
            if (at == null && file == null) {
                return null;
            }
            long haltAt = at == null ? 0 : Long.parseLong(at.trim());
            if (at != null && haltAt < 1) {
                throw new IllegalArgumentException(HALT_AT_PROPERTY + " must be at least 1, got " + at);
            }
            try {
                return new Mode(haltAt, file == null ? null : new FileOutputStream(file, true));
            } catch (IOException e) {
                throw new UncheckedIOException("cannot open the crash-point trace " + file, e);
            }
        }

        void reached(String name) {
            long n = reached.incrementAndGet();
            if (haltAt > 0 && n > haltAt) {
                // Another thread is halting the process right now: start no further durable effect.
                while (true) {
                    LockSupport.park(this);
                }
            }
            if (trace != null) {
                synchronized (trace) {
                    try {
                        trace.write((n + " " + name + "\n").getBytes(StandardCharsets.UTF_8));
                    } catch (IOException e) {
                        throw new UncheckedIOException("cannot write the crash-point trace", e);
                    }
                }
            }
            if (n == haltAt) {
                System.err.println("vigilo: halted at crash point " + n + " (" + name + ")");
                Runtime.getRuntime().halt(HALT_STATUS);
            }
        }
    }
}
