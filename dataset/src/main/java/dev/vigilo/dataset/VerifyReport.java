package dev.vigilo.dataset;

/**
 * The result of a complete verification: every count here was re-derived from the stored bytes.
 *
 * @param caseCount      cases read and checked
 * @param caseFiles      case files read
 * @param indexDocuments index documents read
 * @param bytesRead      total bytes read and hashed
 */
public record VerifyReport(long caseCount, long caseFiles, long indexDocuments, long bytesRead) {}
