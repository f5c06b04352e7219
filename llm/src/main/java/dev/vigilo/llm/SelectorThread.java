package dev.vigilo.llm;

import java.net.http.HttpClient;
import java.time.Duration;
import java.util.Optional;

/**
 * Ends a JDK {@link HttpClient}'s selector thread, which Java 17's client cannot do itself (it has no {@code close};
 * Java 21 added one).
 *
 * <p>Why: the selector thread waits in {@code epoll_wait}, a native call, until the client has been garbage
 * collected. A JVM that exits while any thread is in native code waits up to 300 ms for it to leave (HotSpot's
 * {@code VM_Exit::wait_for_threads_in_native_to_block}), so every command that used an HTTP agent took 0.3 s longer to
 * exit than to finish (docs/benchmarks.md, "Fixed cost of an evaluation"). Interrupting the thread ends its loop (the
 * selector manager checks its interrupt status on every wake-up, and an interrupt wakes a blocked select) and closes
 * the client's selector and connections.
 *
 * <p>How the thread is found: the client names it {@code HttpClient-<id>-SelectorManager}, and the client's {@code
 * toString} ends in {@code (<id>)}. If either ever changes, nothing is found and nothing happens: the exit is then
 * slower, never wrong.
 */
final class SelectorThread {
    private SelectorThread() {}

    /**
     * Interrupts {@code client}'s selector thread and waits up to {@code wait} for it to end. Calls in flight on the
     * client fail; it must not be used afterwards.
     *
     * @return whether the thread was found and has ended
     */
    static boolean stop(HttpClient client, Duration wait) throws InterruptedException {
        Optional<Thread> thread = find(client);
        if (thread.isEmpty()) {
            return false;
        }
        thread.get().interrupt();
        thread.get().join(Math.max(1, wait.toMillis()));
        return !thread.get().isAlive();
    }

    /** The selector thread of {@code client}, while it runs. */
    static Optional<Thread> find(HttpClient client) {
        String text = client.toString();
        int open = text.lastIndexOf('(');
        if (open < 0 || !text.endsWith(")")) {
            return Optional.empty();
        }
        String name = "HttpClient-" + text.substring(open + 1, text.length() - 1) + "-SelectorManager";
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().equals(name))
                .findFirst();
    }
}
