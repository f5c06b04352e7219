/**
 * Thread mechanics shared by every module: the one thread factory and naming scheme ({@link
 * dev.vigilo.common.concurrent.Threads}), the one wait for another thread's result ({@link
 * dev.vigilo.common.concurrent.Futures}) and the one ordered parallel pipeline ({@link
 * dev.vigilo.common.concurrent.OrderedPipeline}).
 */
package dev.vigilo.common.concurrent;
