package dev.vigilo.common.input;

import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

/**
 * The one check that an endpoint URL a user writes into a profile or pipeline (an agent's, a chat step's, and so a
 * judge's or tool's) carries no credentials: such a URL is frozen into plans, identities and logs, so a key in it
 * would be written everywhere. Refused: any user information ({@code http://user:pw@host}, {@code
 * http://sk-key@host}), and any query or fragment parameter whose name is key-like: one of {@link #PARAMETERS}, or
 * ending in one of {@link #SUFFIXES}, compared case-insensitively with {@code -} and {@code .} read as {@code _}
 * after percent-decoding (so {@code API-Key}, {@code X-Amz-Signature} and {@code api%5Fkey} are refused). The key
 * belongs in the environment variable the step's {@code api_key_env} names. Stateless.
 */
public final class EndpointUrls {
    /** Key-like parameter names (normalized: lower case, {@code -} and {@code .} as {@code _}). */
    public static final Set<String> PARAMETERS = Set.of(
            "key",
            "apikey",
            "api_key",
            "token",
            "access_token",
            "auth",
            "authorization",
            "secret",
            "password",
            "passwd",
            "pwd",
            "sig",
            "signature",
            "credential",
            "credentials");

    /** Suffixes that make a parameter name key-like ({@code x_api_key}, {@code client_secret}, ...). */
    public static final List<String> SUFFIXES =
            List.of("_key", "_token", "_secret", "_password", "_signature", "_sig", "_credential");

    /** The message for a URL with credentials, after the key's path (the same for every step and pillar). */
    public static final String CREDENTIALS_MESSAGE =
            "'url' must not carry credentials; put the key in the variable api_key_env names";

    private EndpointUrls() {}

    /** Whether {@code uri} has user information or a key-like query or fragment parameter. */
    public static boolean carriesCredentials(URI uri) {
        return uri.getRawUserInfo() != null
                || hasCredentialParameter(uri.getRawQuery())
                || hasCredentialParameter(uri.getRawFragment());
    }

    /** {@link #CREDENTIALS_MESSAGE} when {@code uri} {@linkplain #carriesCredentials carries credentials}. */
    public static Optional<String> credentialsProblem(URI uri) {
        return carriesCredentials(uri) ? Optional.of(CREDENTIALS_MESSAGE) : Optional.empty();
    }

    /** Whether {@code name}, as written in a query, is a key-like parameter name. */
    public static boolean isCredentialParameter(String name) {
        String n;
        try {
            n = URLDecoder.decode(name, StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            n = name; // a malformed escape: judge the name as written
        }
        n = n.strip().toLowerCase(Locale.ROOT).replace('-', '_').replace('.', '_');
        if (PARAMETERS.contains(n)) {
            return true;
        }
        for (String suffix : SUFFIXES) {
            if (n.endsWith(suffix)) {
                return true;
            }
        }
        return false;
    }

    private static boolean hasCredentialParameter(String raw) {
        if (raw == null || raw.isEmpty()) {
            return false;
        }
        for (String part : raw.split("[&;]")) {
            int eq = part.indexOf('=');
            if (eq > 0 && isCredentialParameter(part.substring(0, eq))) {
                return true;
            }
        }
        return false;
    }
}
