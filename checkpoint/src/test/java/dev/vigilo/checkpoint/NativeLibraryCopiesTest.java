package dev.vigilo.checkpoint;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Stale native-library copies are removed, copies a live process holds are kept, other files are never touched, and
 * the copies a load makes are removed once it returned.
 */
class NativeLibraryCopiesTest {
    @TempDir
    Path dir;

    @Test
    void namesAreThoseTheLoadersGive() {
        assertThat(NativeLibraryCopies.isCopy("liblance_jni13602155073508502975.so"))
                .isTrue();
        assertThat(NativeLibraryCopies.isCopy("liblance_jni42.dylib")).isTrue();
        assertThat(NativeLibraryCopies.isCopy("jnilib-9014023286078980719.tmp")).isTrue();
        assertThat(NativeLibraryCopies.isCopy("liblance_jni.so")).isFalse();
        assertThat(NativeLibraryCopies.isCopy("liblance_jni12.so.keep")).isFalse();
        assertThat(NativeLibraryCopies.isCopy("jnilib-x.tmp")).isFalse();
        assertThat(NativeLibraryCopies.isCopy("libzstd-jni-1.5.7-28123.so")).isFalse();
    }

    @Test
    void staleCopiesGoCopiesInUseAndOtherFilesStay() throws Exception {
        assumeTrue(Files.isDirectory(Path.of("/proc/self")), "needs /proc to tell which copies are in use");
        Path stale = Files.writeString(dir.resolve("liblance_jni111.so"), "partial");
        Path staleArrow = Files.writeString(dir.resolve("jnilib-222.tmp"), "partial");
        Path held = Files.writeString(dir.resolve("liblance_jni333.so"), "being written");
        Path other = Files.writeString(dir.resolve("liblance_jni.so.txt"), "not a copy");
        // A live process holding the copy open, as one that is unpacking it does.
        Process holder = new ProcessBuilder("sh", "-c", "exec 3<\"$0\"; echo ready; exec sleep 60", held.toString())
                .redirectErrorStream(true)
                .start();
        try {
            assertThat(new String(holder.getInputStream().readNBytes(6))).isEqualTo("ready\n");
            new NativeLibraryCopies(dir).removeStale();
            assertThat(stale).doesNotExist();
            assertThat(staleArrow).doesNotExist();
            assertThat(held).exists();
            assertThat(other).exists();
        } finally {
            holder.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        new NativeLibraryCopies(dir).removeStale();
        assertThat(held).doesNotExist();
        assertThat(other).exists();
    }

    @Test
    void theCopiesALoadMakesAreRemovedAfterItAndALeftoverBeforeIt() throws Exception {
        Path sub = Files.createDirectories(dir.resolve("tmp"));
        Path leftover = Files.writeString(sub.resolve("liblance_jni5.so"), "from a killed process");
        NativeLibraryCopies copies = new NativeLibraryCopies(sub);
        List<Path> seenByLoad = new ArrayList<>();
        copies.loadUnderLock(() -> {
            seenByLoad.addAll(copies.copies());
            try {
                Files.writeString(sub.resolve("liblance_jni6.so"), "unpacked");
                Files.writeString(sub.resolve("jnilib-7.tmp"), "unpacked");
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        assertThat(seenByLoad).as("the leftover was removed before the load").isEmpty();
        assertThat(leftover).doesNotExist();
        try (Stream<Path> left = Files.list(sub)) {
            assertThat(left.map(p -> p.getFileName().toString())).containsExactly(NativeLibraryCopies.LOCK_FILE);
        }
    }

    @Test
    void aDirectoryThatCannotBeUsedStillRunsTheLoad() throws Exception {
        Path file = Files.writeString(dir.resolve("a-file"), "x");
        boolean[] ran = {false};
        new NativeLibraryCopies(file.resolve("sub")).loadUnderLock(() -> ran[0] = true);
        assertThat(ran[0]).isTrue();
    }
}
