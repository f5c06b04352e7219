package dev.vigilo.web;

import com.github.mustachejava.DefaultMustacheFactory;
import com.github.mustachejava.Mustache;
import com.github.mustachejava.MustacheFactory;
import dev.vigilo.stats.Confidence;
import io.javalin.http.Context;
import java.io.StringWriter;
import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Server-rendered pages: Mustache templates from the classpath ({@code web/templates}), HTML-escaped by default
 * ({@code {{value}}} escapes {@code & < > " ' ` =}; the templates never use the unescaped form), and the small
 * formatting helpers the pages share. Compiled templates are cached.
 */
final class Views {
    private static final DateTimeFormatter TIME =
            DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss'Z'", Locale.ROOT).withZone(ZoneOffset.UTC);

    private final MustacheFactory factory = new DefaultMustacheFactory("web/templates");
    private final Map<String, Mustache> compiled = new ConcurrentHashMap<>();
    private final String csrf;
    private final boolean databases;
    private final boolean datagen;

    /**
     * @param databases whether runs and datasets are shown (their navigation links)
     * @param datagen   whether datagen experiments are shown
     */
    Views(String csrf, boolean databases, boolean datagen) {
        this.csrf = csrf;
        this.databases = databases;
        this.datagen = datagen;
        // Compiled at start, so no visitor pays for it and a broken template stops the server at once.
        for (String t : TEMPLATES) {
            compiled.put(t, factory.compile(t + ".mustache"));
        }
    }

    static final java.util.List<String> TEMPLATES = java.util.List.of(
            "error",
            "runs",
            "run",
            "cases",
            "case",
            "case-transcript",
            "compare",
            "matrix",
            "groups",
            "datasets",
            "dataset",
            "datagen",
            "experiment",
            "item",
            "sessions",
            "session");

    /** A page model with what every page's layout needs. */
    Map<String, Object> page(String title, String section) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("title", title);
        m.put("csrf", csrf);
        m.put("nav_" + section, true);
        m.put("show_databases", databases);
        m.put("show_datagen", datagen);
        return m;
    }

    void render(Context ctx, String template, Map<String, Object> model) {
        Mustache m = compiled.computeIfAbsent(template, t -> factory.compile(t + ".mustache"));
        StringWriter out = new StringWriter(8_192);
        m.execute(out, model);
        ctx.contentType("text/html; charset=utf-8").result(out.toString());
    }

    static String time(Instant t) {
        return t == null ? "" : TIME.format(t);
    }

    /** A count with thousands separators ({@code 12,345}), as the page's script writes the counts it updates. */
    static String count(long n) {
        return String.format(Locale.ROOT, "%,d", n);
    }

    /** A size in bytes: {@code 512 bytes}, {@code 493.5 KiB}, {@code 12.0 MiB}, with the exact count beside it. */
    static String bytes(long n) {
        if (n < 1024) {
            return n + (n == 1 ? " byte" : " bytes");
        }
        double v = n;
        String[] units = {"KiB", "MiB", "GiB", "TiB"};
        int u = -1;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return String.format(Locale.ROOT, "%.1f %s (%,d bytes)", v, units[u], n);
    }

    static String percent(double fraction) {
        return String.format(Locale.ROOT, "%.1f%%", fraction * 100);
    }

    /** A confidence level as a percentage: {@code 95%}, {@code 99.9%}. */
    static String confidence(Confidence c) {
        return BigDecimal.valueOf(c.level())
                        .movePointRight(2)
                        .stripTrailingZeros()
                        .toPlainString()
                + "%";
    }

    /** A difference of rates in points with its sign: {@code +2.5 pts}. */
    static String points(double difference) {
        return String.format(Locale.ROOT, "%+.1f pts", difference * 100);
    }

    /** A p-value to three significant digits ({@code 0.219}, {@code 0.00195}, {@code 2.2e-05}). */
    static String pValue(double p) {
        return p >= 0.001 ? String.format(Locale.ROOT, "%.3g", p) : String.format(Locale.ROOT, "%.2g", p);
    }

    static String millis(long ms) {
        if (ms < 1_000) {
            return ms + " ms";
        }
        return String.format(Locale.ROOT, "%.2f s", ms / 1_000.0);
    }

    static String duration(Duration d) {
        long s = d.toSeconds();
        if (s < 60) {
            return s + " s";
        }
        if (s < 3_600) {
            return s / 60 + " min " + s % 60 + " s";
        }
        return s / 3_600 + " h " + (s % 3_600) / 60 + " min";
    }

    /** At most {@code max} characters, marked when cut. */
    static String cut(String s, int max) {
        if (s == null) {
            return "";
        }
        return s.length() <= max ? s : s.substring(0, max) + " … (" + (s.length() - max) + " more characters)";
    }

    /** A CSS class for a fraction in [0, 1]: {@code lvl-0} .. {@code lvl-10} (no inline styles: the CSP forbids them). */
    static String level(double fraction) {
        int l = (int) Math.round(Math.max(0, Math.min(1, fraction)) * 10);
        return "lvl-" + l;
    }
}
