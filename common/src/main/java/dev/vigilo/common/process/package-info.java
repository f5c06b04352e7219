/**
 * Processes of this machine: a {@link dev.vigilo.common.process.ProcessRef} (pid and start time, a zombie counting
 * as dead) and the {@link dev.vigilo.common.process.LocalHost} name recorded beside it, so that a record can tell
 * later whether its holder still runs; and {@link dev.vigilo.common.process.ProcessTree}, which ends a child command
 * together with every process it started.
 */
package dev.vigilo.common.process;
