package dev.vigilo.common.concurrent;

import java.util.Objects;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;

/**
 * The one way Vigilo makes its own threads: daemon threads (an abandoned call or a background loop never keeps the
 * JVM alive; every owner stops its threads itself on close) named by one scheme, {@code vigilo-<role>-<n>} for the
 * n-th thread of a factory (n from 1) and {@code vigilo-<role>} for a lone thread, so a thread dump says which part
 * of Vigilo each thread belongs to. Stateless; each factory counts its own threads and is thread-safe.
 */
public final class Threads {
    /** A role: lower-case words joined by hyphens (or dots, as in a bucket name), e.g. {@code dataset-read}. */
    private static final Pattern ROLE = Pattern.compile("[a-z0-9]+([.-][a-z0-9]+)*");

    private Threads() {}

    /** The JDK's property of the common fork-join pool's parallelism. */
    static final String COMMON_PARALLELISM = "java.util.concurrent.ForkJoinPool.common.parallelism";

    /**
     * Gives the JVM's common fork-join pool at least 2 threads on a machine of 1 or 2 cores (where its default is 1),
     * unless the property is set already; call first thing in {@code main}, before anything uses a {@code
     * CompletableFuture}. Why: with a parallelism below 2, {@code CompletableFuture}'s default async executor starts a
     * new thread per task, and the JDK HTTP client completes every {@code sendAsync} through that executor, so each
     * model call's answer started a thread (issue 27: 100,063 thread starts in one run; docs/execution.md, "Calls in
     * flight"). With 2 the common pool serves them on 2 threads.
     */
    public static void asyncPoolOfAtLeastTwo() {
        if (System.getProperty(COMMON_PARALLELISM) == null
                && Runtime.getRuntime().availableProcessors() <= 2) {
            System.setProperty(COMMON_PARALLELISM, "2");
        }
    }

    /** A factory of daemon threads named {@code vigilo-<role>-1}, {@code vigilo-<role>-2}, ... */
    public static ThreadFactory daemonFactory(String role) {
        String prefix = "vigilo-" + checked(role) + "-";
        AtomicLong n = new AtomicLong();
        return task -> daemon(prefix + n.incrementAndGet(), task);
    }

    /** Starts a lone daemon thread named {@code vigilo-<role>} running {@code task}. */
    public static Thread startDaemon(String role, Runnable task) {
        Thread t = daemon("vigilo-" + checked(role), task);
        t.start();
        return t;
    }

    private static Thread daemon(String name, Runnable task) {
        Thread t = new Thread(Objects.requireNonNull(task, "task"), name);
        t.setDaemon(true);
        return t;
    }

    private static String checked(String role) {
        Objects.requireNonNull(role, "role");
        if (!ROLE.matcher(role).matches()) {
            throw new IllegalArgumentException("a thread role is lower-case words joined by hyphens, got " + role);
        }
        return role;
    }
}
