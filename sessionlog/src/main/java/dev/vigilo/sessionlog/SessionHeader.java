package dev.vigilo.sessionlog;

import java.util.Objects;

/**
 * The header record of a session log (frame 0): {@code {"type":"session","version":0,"id":...,"createdAt":...,
 * ["cwd"],"delegationDepth":...}}. Optional header fields a read log carried are preserved by copying the
 * header frame verbatim; this record holds what Vigilo needs to name and create a log.
 *
 * @param id              session id, non-empty
 * @param cwd             absolute working directory, or null when the session has none
 * @param createdAt       creation time in epoch milliseconds, >= 0
 * @param delegationDepth >= 0
 */
public record SessionHeader(String id, String cwd, long createdAt, long delegationDepth) {
    public SessionHeader {
        Objects.requireNonNull(id, "id");
        if (id.isEmpty()) {
            throw new IllegalArgumentException("session id must not be empty");
        }
        if (cwd != null && !cwd.startsWith("/")) {
            throw new IllegalArgumentException("cwd must be absolute, got " + cwd);
        }
        if (createdAt < 0 || delegationDepth < 0) {
            throw new IllegalArgumentException("createdAt and delegationDepth must be >= 0");
        }
    }

    /** @return the header line (without newline) in the official writer's key order */
    public String toJsonLine() {
        var n = Json.MAPPER.createObjectNode();
        n.put("type", "session").put("version", 0).put("id", id).put("createdAt", createdAt);
        if (cwd != null) {
            n.put("cwd", cwd);
        }
        n.put("delegationDepth", delegationDepth);
        return n.toString();
    }
}
