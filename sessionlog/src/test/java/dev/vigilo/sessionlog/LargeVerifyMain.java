package dev.vigilo.sessionlog;

import java.nio.file.Path;

/** Child-process entry for the streaming test: verifies FILE and prints the report JSON and the max heap. */
public final class LargeVerifyMain {
    public static void main(String[] args) {
        VerifyReport r = SessionVerifier.verify(Path.of(args[0]));
        System.out.println(r.toJson());
        System.out.println("maxHeap=" + Runtime.getRuntime().maxMemory());
        System.exit(r.accepted() ? 0 : 1);
    }
}
