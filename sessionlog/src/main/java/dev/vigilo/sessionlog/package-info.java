/**
 * Session logs as small write-ahead logs, compatible with the published DeepSeek Harness format in both of its
 * encodings, {@code session.jsonl.zstd} and the uncompressed {@code session.jsonl} ({@link
 * dev.vigilo.sessionlog.Compression}, detected from the bytes; see docs/formats/session-log.md).
 * <p>Public API for the {@code vigilo session ...} commands:
 * {@link dev.vigilo.sessionlog.SessionVerifier#verify} ({@code verify}),
 * {@link dev.vigilo.sessionlog.SessionCat#cat} ({@code cat}),
 * {@link dev.vigilo.sessionlog.SessionRepair#repair} ({@code repair}),
 * {@link dev.vigilo.sessionlog.SessionCompactor#compact} ({@code compact});
 * for writers: {@link dev.vigilo.sessionlog.SessionLogWriter} with an
 * {@link dev.vigilo.sessionlog.EpochSource} ({@link dev.vigilo.sessionlog.LockFileEpochSource} locally).
 * Errors are the shared kinds of {@code dev.vigilo.common.errors}; a damaged or unsupported log raises the typed
 * {@link dev.vigilo.sessionlog.CorruptSessionLogException} / {@link dev.vigilo.sessionlog.UnsupportedSessionFormatException}
 * (both {@code DamagedException}s, with the byte offset). Everything else is package-private.
 */
package dev.vigilo.sessionlog;
