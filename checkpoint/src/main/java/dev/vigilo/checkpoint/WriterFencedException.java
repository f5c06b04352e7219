package dev.vigilo.checkpoint;

/**
 * This writer's MemWAL shard was opened by another writer incarnation (a newer shard epoch). Lance
 * then drops this writer's later puts without any error, so the batch being written is NOT durable
 * and must not be acknowledged; the writer is unusable and must be closed. Not retryable by the
 * same writer.
 */
public class WriterFencedException extends CheckpointException {
    public WriterFencedException(String message) {
        super(message);
    }
}
