package dev.vigilo.control;

import java.util.regex.Pattern;

/** Makes JDBC URLs safe to print: every {@code ...password=value} parameter loses its value. */
final class JdbcUrls {

    // Matches password, sslpassword, sslkeypassword... in both '?'/'&' query syntax and ';' property syntax.
    private static final Pattern SECRET = Pattern.compile("(?i)([a-z]*password=)[^&;]*");

    private JdbcUrls() {}

    static String redact(String url) {
        return SECRET.matcher(url).replaceAll("$1***");
    }
}
