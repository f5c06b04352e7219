/**
 * Thread mechanics shared by every module: the one thread factory and naming scheme ({@link
 * dev.vigilo.common.concurrent.Threads}), the one wait for another thread's result ({@link
 * dev.vigilo.common.concurrent.Futures}), the one ordered parallel pipeline ({@link
 * dev.vigilo.common.concurrent.OrderedPipeline}) and the one group commit ({@link
 * dev.vigilo.common.concurrent.GroupCommit}).
 */
package dev.vigilo.common.concurrent;
