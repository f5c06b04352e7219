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
 * {@code kills} is killed with SIGKILL a random while after it reports its first finished item, the later ones run to
 * their end (or die on their own). The kill tests' shared loop; what a run left behind is theirs to check.
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
     * @param minDelayMillis the least time from a child's first finished item to its kill
     * @param spreadMillis  the random extra time on top of it (from {@code random})
     */
    static Outcome run(
            Path dir,
            List<String> args,
            int kills,
            int extraRounds,
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
                try (BufferedReader out =
                        new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                    String line;
                    while ((line = out.readLine()) != null) {
                        if (line.startsWith("DONE")) {
                            done = true;
                        }
                        if (!scheduled && line.contains("item_finished") && round < kills) {
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
