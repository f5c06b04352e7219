package dev.vigilo.web;

import io.javalin.http.Context;
import io.javalin.http.HandlerType;
import io.javalin.http.HttpStatus;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Locale;
import java.util.Set;

/**
 * Checks every request before it is handled (docs/web.md, "Access"):
 *
 * <ul>
 *   <li><b>Host</b>: on a loopback bind only loopback host names are answered, so a web page whose name was re-pointed
 *       at 127.0.0.1 (DNS rebinding) cannot read the dashboard.
 *   <li><b>Token</b>: when one is required, every request must carry it, as {@code Authorization: Bearer T}, as
 *       {@code X-Vigilo-Token: T}, or as the cookie a {@code ?token=T} landing sets. Compared in constant time.
 *   <li><b>Cross-site requests</b>: a state-changing request (POST) needs the token in a header (which another site
 *       cannot set) or, from the dashboard's own forms, the per-server CSRF token and an {@code Origin} (or
 *       {@code Referer}) of this very server.
 * </ul>
 */
final class AccessGuard {
    static final String COOKIE = "vigilo_token";
    static final String HEADER = "X-Vigilo-Token";
    static final String CSRF_FIELD = "csrf";
    private static final Set<String> LOOPBACK_NAMES = Set.of("localhost", "127.0.0.1", "[::1]", "::1");

    private final boolean loopback;
    private final String bind;
    private final byte[] token;
    private final boolean tokenRequired;
    private final String csrf;

    /**
     * @param token the access token; {@code required} says whether reads need it too (writes always do, unless they
     *              come from the dashboard's own forms)
     */
    AccessGuard(boolean loopback, String bind, String token, boolean required) {
        this.loopback = loopback;
        this.bind = bind.toLowerCase(Locale.ROOT);
        this.token = digest(token);
        this.tokenRequired = required;
        this.csrf = random();
    }

    /** A fresh random token: 32 bytes from {@link SecureRandom}, URL-safe base64. */
    static String random() {
        byte[] b = new byte[32];
        new SecureRandom().nextBytes(b);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(b);
    }

    /** The CSRF token the dashboard's forms carry. */
    String csrf() {
        return csrf;
    }

    /**
     * The Host check alone (for probes that answer without the token): on a loopback bind, refuses a request whose
     * Host is not a loopback name.
     */
    void checkHost(Context ctx) {
        if (loopback && !loopbackHost(ctx.header("Host"))) {
            refuse(ctx, HttpStatus.FORBIDDEN, "this server answers only to localhost, 127.0.0.1 or [::1]");
        }
    }

    /** Runs before every handler; ends the request with 4xx when it may not proceed. */
    void check(Context ctx) {
        checkHost(ctx);
        String landing = ctx.queryParam("token");
        if (landing != null && ctx.method() == HandlerType.GET) {
            if (!matches(landing)) {
                refuse(ctx, HttpStatus.UNAUTHORIZED, "wrong access token; use the URL vigilo serve printed");
                return;
            }
            // Keep the token in an HttpOnly cookie and drop it from the address bar (and from history).
            ctx.header(
                    "Set-Cookie",
                    COOKIE + "=" + landing + "; Path=/; HttpOnly; SameSite=Strict"
                            + (ctx.scheme().equals("https") ? "; Secure" : ""));
            ctx.redirect(withoutToken(ctx), HttpStatus.SEE_OTHER);
            ctx.skipRemainingHandlers();
            return;
        }
        boolean headerToken = matches(bearer(ctx)) || matches(ctx.header(HEADER));
        boolean authenticated = headerToken || matches(ctx.cookie(COOKIE));
        if (tokenRequired && !authenticated) {
            refuse(
                    ctx,
                    HttpStatus.UNAUTHORIZED,
                    "an access token is required: open the URL vigilo serve printed, or send it as"
                            + " \"Authorization: Bearer TOKEN\"");
            return;
        }
        if (ctx.method() != HandlerType.GET && ctx.method() != HandlerType.HEAD && !headerToken) {
            if (!sameOrigin(ctx)) {
                refuse(
                        ctx,
                        HttpStatus.FORBIDDEN,
                        "cross-site request refused: the request did not come from this"
                                + " dashboard (send the access token in a header to call the API from a script)");
                return;
            }
            String sent = ctx.header("X-Vigilo-CSRF");
            if (sent == null) {
                sent = ctx.formParam(CSRF_FIELD);
            }
            if (sent == null || !MessageDigest.isEqual(digest(sent), digest(csrf))) {
                refuse(
                        ctx,
                        HttpStatus.FORBIDDEN,
                        "the form is stale or did not come from this dashboard; reload the" + " page and try again");
            }
        }
    }

    private boolean loopbackHost(String host) {
        if (host == null) {
            return false;
        }
        String h = host.toLowerCase(Locale.ROOT);
        if (h.startsWith("[")) {
            int end = h.indexOf(']');
            h = end < 0 ? h : h.substring(0, end + 1);
        } else if (h.indexOf(':') >= 0) {
            h = h.substring(0, h.indexOf(':'));
        }
        return LOOPBACK_NAMES.contains(h) || h.equals(bind) || h.equals("[" + bind + "]");
    }

    /** Whether Origin (or, without it, Referer) names this server as the client reached it. */
    private static boolean sameOrigin(Context ctx) {
        String host = ctx.header("Host");
        if (host == null) {
            return false;
        }
        String origin = ctx.header("Origin");
        String from = origin != null ? origin : ctx.header("Referer");
        if (from == null || from.equals("null")) {
            return false;
        }
        try {
            URI u = URI.create(from);
            String authority = u.getRawAuthority();
            return authority != null
                    && authority.equalsIgnoreCase(host)
                    && ctx.scheme().equalsIgnoreCase(u.getScheme());
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    private static String bearer(Context ctx) {
        String a = ctx.header("Authorization");
        if (a != null && a.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return a.substring(7).trim();
        }
        return null;
    }

    /** Constant-time: both sides are hashed first, so neither length nor prefix leaks through timing. */
    private boolean matches(String candidate) {
        return candidate != null && MessageDigest.isEqual(digest(candidate), token);
    }

    private static byte[] digest(String s) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }

    private static String withoutToken(Context ctx) {
        StringBuilder q = new StringBuilder();
        ctx.queryParamMap().forEach((k, values) -> {
            if (!k.equals("token")) {
                for (String v : values) {
                    q.append(q.length() == 0 ? "?" : "&")
                            .append(URLEncoder.encode(k, StandardCharsets.UTF_8))
                            .append('=')
                            .append(URLEncoder.encode(v, StandardCharsets.UTF_8));
                }
            }
        });
        return ctx.path() + q;
    }

    private static void refuse(Context ctx, HttpStatus status, String message) {
        throw new Refused(status, message);
    }

    /** A request refused before its handler; rendered as a page or JSON like every other error. */
    static final class Refused extends RuntimeException {
        final HttpStatus status;

        Refused(HttpStatus status, String message) {
            super(message, null, false, false);
            this.status = status;
        }
    }

    /** Whether the token is required on every request. */
    boolean tokenRequired() {
        return tokenRequired;
    }
}
