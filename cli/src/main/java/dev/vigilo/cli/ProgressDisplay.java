package dev.vigilo.cli;

import dev.vigilo.dataset.UploadProgress;
import java.io.PrintStream;
import java.nio.file.Path;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarStyle;

/**
 * Shows upload progress as a progress bar when stderr is a terminal; prints nothing otherwise, so scripted runs
 * get clean output. One bar per pass (validate, then store).
 */
final class ProgressDisplay implements UploadProgress, AutoCloseable {
    private final boolean enabled;
    private final String label;
    private ProgressBar bar;
    private Phase phase;

    private ProgressDisplay(boolean enabled, String label) {
        this.enabled = enabled;
        this.label = label;
    }

    static ProgressDisplay forTerminal(Path file) {
        return new ProgressDisplay(System.console() != null, CommandSupport.shown(file.getFileName()));
    }

    @Override
    public void update(Phase phase, long bytesDone, long bytesTotal, long cases) {
        if (!enabled) {
            return;
        }
        if (phase != this.phase) {
            close();
            this.phase = phase;
            bar = new ProgressBarBuilder()
                    .setTaskName((phase == Phase.VALIDATE ? "validate " : "store    ") + label)
                    .setInitialMax(Math.max(1, bytesTotal))
                    .setUnit(" MiB", 1024 * 1024)
                    .setStyle(ProgressBarStyle.ASCII)
                    .setConsumer(
                            new me.tongfei.progressbar.ConsoleProgressBarConsumer(new PrintStream(System.err, true)))
                    .showSpeed()
                    .build();
        }
        bar.stepTo(bytesDone);
        bar.setExtraMessage(cases + " cases");
    }

    @Override
    public void close() {
        if (bar != null) {
            bar.close();
            bar = null;
        }
    }
}
