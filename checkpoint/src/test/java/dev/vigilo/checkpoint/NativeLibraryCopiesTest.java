package dev.vigilo.checkpoint;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Stale native-library copies are removed (not while another process is loading), copies a live process holds are
 * kept, other files are never touched, and the copies a process maps are removed once its load returned.
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
    void aLeftoverGoesBeforeTheLoadAndTheCopiesTheProcessMapsAfterIt() throws Exception {
        assumeTrue(Files.isDirectory(Path.of("/proc/self")), "needs /proc to tell which copies are in use");
        Path sub = Files.createDirectories(dir.resolve("tmp"));
        Path leftover = Files.writeString(sub.resolve("liblance_jni5.so"), "from a killed process");
        Path loaded = sub.resolve("liblance_jni6.so");
        Path othersInProgress = sub.resolve("jnilib-7.tmp");
        NativeLibraryCopies copies = new NativeLibraryCopies(sub);
        List<Path> seenByLoad = new ArrayList<>();
        List<MappedByteBuffer> mapped = new ArrayList<>();
        Process other = null;
        try {
            copies.loadUnderLock(() -> {
                seenByLoad.addAll(copies.copies());
                try {
                    // What a loader does: unpack, then map (System.load). The map is what names the copy ours.
                    Files.writeString(loaded, "unpacked");
                    try (FileChannel ch = FileChannel.open(loaded, StandardOpenOption.READ)) {
                        mapped.add(ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size()));
                    }
                    // Another process unpacking at the same time holds its copy open.
                    Files.writeString(othersInProgress, "unpacking");
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            assertThat(seenByLoad)
                    .as("the leftover was removed before the load")
                    .isEmpty();
            assertThat(leftover).doesNotExist();
            assertThat(loaded).as("the copy this process maps").doesNotExist();
            assertThat(mapped.get(0).get(0))
                    .as("still readable through its mapping")
                    .isEqualTo((byte) 'u');
            assertThat(othersInProgress)
                    .as("not ours, and no stale copy: nobody held it, so the sweep after took it")
                    .doesNotExist();

            Path held = Files.writeString(sub.resolve("jnilib-8.tmp"), "unpacking");
            other = new ProcessBuilder("sh", "-c", "exec 3<\"$0\"; echo ready; exec sleep 60", held.toString())
                    .redirectErrorStream(true)
                    .start();
            assertThat(new String(other.getInputStream().readNBytes(6))).isEqualTo("ready\n");
            copies.loadUnderLock(() -> {});
            assertThat(held).as("a copy another process holds open stays").exists();
        } finally {
            if (other != null) {
                other.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void noSweepWhileAnotherProcessIsLoading() throws Exception {
        Path stale = Files.writeString(dir.resolve("liblance_jni9.so"), "partial");
        Process loading = new ProcessBuilder(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-cp",
                        System.getProperty("java.class.path"),
                        NativeLockHolderMain.class.getName(),
                        dir.toString())
                .redirectErrorStream(true)
                .start();
        try {
            assertThat(new String(loading.getInputStream().readNBytes(5))).isEqualTo("held\n");
            new NativeLibraryCopies(dir).loadUnderLock(() -> {});
            assertThat(stale)
                    .as("kept while another process holds the shared lock")
                    .exists();
        } finally {
            loading.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        new NativeLibraryCopies(dir).loadUnderLock(() -> {});
        assertThat(stale).as("removed once nobody loads").doesNotExist();
    }

    @Test
    void aDirectoryThatCannotBeUsedStillRunsTheLoad() throws Exception {
        Path file = Files.writeString(dir.resolve("a-file"), "x");
        boolean[] ran = {false};
        new NativeLibraryCopies(file.resolve("sub")).loadUnderLock(() -> ran[0] = true);
        assertThat(ran[0]).isTrue();
    }
}
