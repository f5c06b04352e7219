package dev.vigilo.cli;

import dev.vigilo.datagen.DatagenProgress;
import dev.vigilo.datagen.ItemStatus;
import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import me.tongfei.progressbar.ProgressBar;

/**
 * Shows a datagen run's progress: a progress bar on stderr when the command runs on a terminal,
 * otherwise one JSON object per finished item on stdout ({@code {"event":"item_finished",
 * "finished":N,"item_id":"...","items":M,"status":"completed|filtered|failed|running"}}, keys
 * sorted, flushed per line) for scripts. The runner calls it from the command's thread only.
 */
final class DatagenProgressDisplay implements DatagenProgress, AutoCloseable {
    private final boolean terminal;
    private final String experiment;
    private final PrintWriter out;
    private ProgressBar bar;
    private int items;

    private DatagenProgressDisplay(boolean terminal, String experiment, PrintWriter out) {
        this.terminal = terminal;
        this.experiment = experiment;
        this.out = out;
    }

    /** A bar when {@code terminal}, else JSON lines on {@code out}. */
    static DatagenProgressDisplay of(boolean terminal, String experiment, PrintWriter out) {
        return new DatagenProgressDisplay(terminal, experiment, out);
    }

    @Override
    public void started(int finished, int failed, int items) {
        if (!terminal) {
            return;
        }
        this.items = items;
        bar = new ProgressBar("datagen " + experiment, items);
        show(finished, failed);
    }

    @Override
    public void itemFinished(String itemId, ItemStatus status, int finished, int failed, int items) {
        if (terminal) {
            if (items != this.items) {
                bar.maxHint(items); // an expand step added items
            }
            this.items = items;
            show(finished, failed);
            return;
        }
        Map<String, Object> line = new LinkedHashMap<>(); // keys in sorted order
        line.put("event", "item_finished");
        line.put("finished", finished);
        line.put("item_id", itemId);
        line.put("items", items);
        line.put("status", status.name().toLowerCase(Locale.ROOT));
        out.println(Json.write(line));
        out.flush();
    }

    private void show(int finished, int failed) {
        bar.stepTo(finished);
        if (failed > 0) {
            bar.setExtraMessage(failed + " failed");
        }
    }

    @Override
    public void close() {
        if (bar != null) {
            bar.close();
            bar = null;
        }
    }
}
