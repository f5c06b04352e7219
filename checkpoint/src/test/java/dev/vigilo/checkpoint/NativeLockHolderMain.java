package dev.vigilo.checkpoint;

import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/** Test helper process: {@code NativeLockHolderMain DIR} holds DIR's native-library lock shared, as a process that is
 * loading does, prints "held" and sleeps. */
public final class NativeLockHolderMain {
    private NativeLockHolderMain() {}

    public static void main(String[] args) throws Exception {
        FileChannel ch = FileChannel.open(
                Path.of(args[0]).resolve(NativeLibraryCopies.LOCK_FILE),
                StandardOpenOption.CREATE,
                StandardOpenOption.READ,
                StandardOpenOption.WRITE);
        ch.lock(0, Long.MAX_VALUE, true);
        System.out.println("held");
        Thread.sleep(120_000);
    }
}
