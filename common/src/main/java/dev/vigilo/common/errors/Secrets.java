package dev.vigilo.common.errors;

import java.util.regex.Pattern;

/**
 * Masks credentials in text that may be printed: the password of URL user information
 * ({@code scheme://user:password@host}) and the value of every {@code ...password=} parameter (query syntax
 * {@code ?password=x&} and property syntax {@code ;password=x;}). Every message naming a URL goes through
 * {@link #mask}; the command line also masks every error message once more before printing it.
 */
public final class Secrets {
    /** The mask printed in place of a secret. */
    public static final String MASK = "***";

    // scheme://user:password@ : the password runs to the last '@' before the path, so '@' inside it is covered.
    private static final Pattern USERINFO = Pattern.compile("(?i)([a-z][a-z0-9+.-]*://[^:/?#@\\s]*:)[^/?#\\s]*@");
    // password=, sslpassword=, PASSWORD=, secret_access_key=... up to the next separator.
    private static final Pattern PARAMETER =
            Pattern.compile("(?i)((?:[a-z_]*password|[a-z_]*secret[a-z_]*|[a-z_]*token)=)[^&;\\s'\"]*");

    private Secrets() {}

    /** {@code text} with every credential replaced by {@value #MASK}; {@code null} stays {@code null}. */
    public static String mask(String text) {
        if (text == null) {
            return null;
        }
        String masked = USERINFO.matcher(text).replaceAll("$1" + MASK + "@");
        return PARAMETER.matcher(masked).replaceAll("$1" + MASK);
    }
}
