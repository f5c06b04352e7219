package dev.vigilo.common.crash;

/** Test workload: {@code BoundariesMain N} passes N boundaries, printing "after K" to stdout after the K-th. */
public final class BoundariesMain {
    private BoundariesMain() {}

    public static void main(String[] args) {
        int n = Integer.parseInt(args[0]);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> System.out.println("shutdown hook ran")));
        for (int k = 1; k <= n; k++) {
            CrashPoints.boundary("test.step-" + k);
            System.out.println("after " + k);
        }
    }
}
