package dev.vigilo.sessionlog;

/** Which protocol metadata channel a reader used to decide the committed region. */
public enum Channel {
    /** In-frame commit records ({@link CommitRecord}). */
    P1,
    /** The sidecar manifest {@code session.jsonl.zstd.meta} ({@link Manifest}). */
    P2,
    /** No protocol metadata: the published reader's behaviour (fallback identity). */
    NONE;

    /** @return the lower-case name used in JSON output ("p1", "p2", "none") */
    public String jsonName() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
