package dev.vigilo.datagen;

import dev.vigilo.common.crash.ChildJvm;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Runs {@link RunMain} as child JVMs, one after another, until one prints {@code DONE}: each of the first
 * {@code kills} is killed with SIGKILL a random while after it reports a randomly chosen finished item (the first up
 * to the {@code maxFinished}-th of its own), the later ones run to their end (or die on their own). The kill tests'
 * shared loop; what a run left behind is theirs to check.
 *
 * <p>The kill follows the child's own progress rather than a fixed time after its start: on a loaded machine a
 * resumed child may find most work done and finish within a few hundred milliseconds of its first item, so a kill
 * timed from that item alone may land after {@code DONE}, and the test would see fewer kills than it asked for.
 */
final class RunKills {
    /** Whether a child finished the run, and how many children ended without finishing it. */
    record Outcome(boolean finished, int killed) {}

    private RunKills() {}

    /**
     * @param dir           the children's working directory
     * @param args          {@link RunMain}'s arguments (pipeline file, root, experiment, workers)
     * @param kills         how many children to kill
     * @param extraRounds   how many more children may run after the killed ones before the loop gives up
     * @param maxFinished   the kill follows the child's n-th finished item, n drawn from 1 to this (from
     *                      {@code random})
     * @param minDelayMillis the least time from that item to the kill
     * @param spreadMillis  the random extra time on top of it (from {@code random})
     */
    static Outcome run(
            Path dir,
            List<String> args,
            int kills,
            int extraRounds,
            int maxFinished,
            int minDelayMillis,
            int spreadMillis,
            Random random)
            throws IOException, InterruptedException {
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
        int killed = 0;
        boolean done = false;
        try {
            for (int round = 0; round < kills + extraRounds && !done; round++) {
                Process p = new ProcessBuilder(
                                ChildJvm.command(dir, RunMain.class.getName(), args.toArray(String[]::new)))
                        .redirectError(ProcessBuilder.Redirect.DISCARD)
                        .start();
                boolean scheduled = false;
                int finished = 0;
                int killAfter = 1 + random.nextInt(maxFinished);
                try (BufferedReader out =
                        new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                    String line;
                    while ((line = out.readLine()) != null) {
                        if (line.startsWith("DONE")) {
                            done = true;
                        }
                        if (line.contains("item_finished")) {
                            finished++;
                        }
                        if (!scheduled && finished == killAfter && round < kills) {
                            scheduled = true;
                            // SIGKILL mid-work through the process handle: Process.destroyForcibly also closes the
                            // child's stdout under this reader ("Stream closed"); the handle only kills, and the
                            // reader sees the end of the stream as the child dies.
                            ProcessHandle child = p.toHandle();
                            timer.schedule(
                                    child::destroyForcibly,
                                    minDelayMillis + random.nextInt(spreadMillis),
                                    TimeUnit.MILLISECONDS);
                        }
                    }
                }
                p.waitFor(60, TimeUnit.SECONDS);
                if (!done) {
                    killed++;
                }
            }
        } finally {
            timer.shutdownNow();
        }
        return new Outcome(done, killed);
    }
}
