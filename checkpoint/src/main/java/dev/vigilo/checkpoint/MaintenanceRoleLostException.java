package dev.vigilo.checkpoint;

/**
 * The maintenance role is no longer held: the S3 lease expired and another worker took it over (or
 * the lease object was changed behind the holder's back). The pass was not run; elect again.
 */
public class MaintenanceRoleLostException extends CheckpointException {
    public MaintenanceRoleLostException(String message) {
        super(message);
    }
}
