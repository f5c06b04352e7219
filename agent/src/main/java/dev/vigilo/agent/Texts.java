package dev.vigilo.agent;

import java.time.Duration;
import java.util.List;
import java.util.Locale;

/** Small helpers that keep error messages on one line and bounded. */
final class Texts {
    private Texts() {}

    /** {@code s} on one line (control characters become spaces, runs of blanks collapse), at most {@code max} chars. */
    static String oneLine(String s, int max) {
        StringBuilder b = new StringBuilder(Math.min(s.length(), max + 1));
        boolean blank = false;
        for (int i = 0; i < s.length() && b.length() <= max; i++) {
            char c = s.charAt(i);
            if (Character.isWhitespace(c) || Character.isISOControl(c)) {
                if (!blank && b.length() > 0) {
                    b.append(' ');
                }
                blank = true;
            } else {
                b.append(c);
                blank = false;
            }
        }
        String out = b.toString().strip();
        return out.length() > max ? out.substring(0, max) + "..." : out;
    }

    /** The last {@code max} characters of {@code s} on one line, "..." marking a cut start. */
    static String tail(String s, int max) {
        String line = oneLine(s, Integer.MAX_VALUE - 1);
        return line.length() > max ? "..." + line.substring(line.length() - max) : line;
    }

    /** A program and its arguments as one bounded, quoted string for messages. */
    static String command(List<String> argv) {
        return "\"" + oneLine(String.join(" ", argv), 120) + "\"";
    }

    /** Seconds with one decimal, e.g. {@code 0.3 s}. */
    static String seconds(Duration d) {
        return String.format(Locale.ROOT, "%.1f s", d.toNanos() / 1e9);
    }

    /** A byte count for messages: {@code 1 MiB}, {@code 64 KiB} or {@code 17 bytes}. */
    static String bytes(long n) {
        if (n >= (1 << 20) && n % (1 << 20) == 0) {
            return (n >> 20) + " MiB";
        }
        if (n >= 1024 && n % 1024 == 0) {
            return (n >> 10) + " KiB";
        }
        return n + " bytes";
    }
}
