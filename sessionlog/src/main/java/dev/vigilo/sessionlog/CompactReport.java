package dev.vigilo.sessionlog;

/**
 * Result of {@link SessionCompactor#compact}.
 *
 * @param output       the compacted log
 * @param backup       hard link to the original when compacted in place, else null
 * @param framesBefore complete frames in the input, header included
 * @param framesAfter  frames in the output, header included
 * @param bytesBefore  size of the input
 * @param bytesAfter   size of the output
 * @param events       stored events kept
 */
public record CompactReport(
        java.nio.file.Path output,
        java.nio.file.Path backup,
        long framesBefore,
        long framesAfter,
        long bytesBefore,
        long bytesAfter,
        long events) {}
