/**
 * Processes of this machine as Vigilo records them to decide later whether their holder still runs: a
 * {@link dev.vigilo.common.process.ProcessRef} (pid and start time, a zombie counting as dead) and the
 * {@link dev.vigilo.common.process.LocalHost} name recorded beside it.
 */
package dev.vigilo.common.process;
