/**
 * The worker (docs/execution.md, "Workers"): claims chunk leases, renews them, checks a claimed chunk's membership,
 * runs the agent and evaluators per case, writes receipts and transcripts, and between claims coordinates admission
 * and settlement. The module's API: {@link dev.vigilo.exec.worker.Worker} (+ {@code Worker.Listener}, {@code
 * Worker.Options}, {@code Worker.Report}); everything else here is package-private. The only room that uses other
 * rooms ({@code admission}, {@code settlement}, {@code placement}); no room uses it.
 */
package dev.vigilo.exec.worker;
