/**
 * The session log {@code session.jsonl.zstd} as a small write-ahead log, compatible with the published
 * DeepSeek Harness format (see docs/formats/session-log.md).
 * <p>Public API for the {@code vigilo session ...} commands:
 * {@link dev.vigilo.sessionlog.SessionVerifier#verify} ({@code verify}),
 * {@link dev.vigilo.sessionlog.SessionCat#cat} ({@code cat}),
 * {@link dev.vigilo.sessionlog.SessionRepair#repair} ({@code repair}),
 * {@link dev.vigilo.sessionlog.SessionCompactor#compact} ({@code compact});
 * for writers: {@link dev.vigilo.sessionlog.SessionLogWriter} with an
 * {@link dev.vigilo.sessionlog.EpochSource} ({@link dev.vigilo.sessionlog.LockFileEpochSource} locally).
 * Exceptions derive from {@link dev.vigilo.sessionlog.VigiloException}. Everything else is package-private.
 */
package dev.vigilo.sessionlog;
