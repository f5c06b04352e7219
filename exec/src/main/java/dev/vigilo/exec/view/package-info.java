/**
 * The read-only views of runs that {@code vigilo run status|results|transcript|compare} and the dashboard show: a
 * run's status, results (JSON lines, or a JUnit XML report for CI systems) and case pages, the run catalog, a case's
 * transcripts, and the comparison of two runs. The module's API: {@link dev.vigilo.exec.view.ExecutionStatusReader},
 * {@link dev.vigilo.exec.view.RunResults}, {@link dev.vigilo.exec.view.JunitReport}, {@link
 * dev.vigilo.exec.view.CaseResults}, {@link dev.vigilo.exec.view.RunCatalog}, {@link
 * dev.vigilo.exec.view.RunTranscripts}, {@link dev.vigilo.exec.view.RunComparison}; the rest is package-private.
 * Reads the records ({@code record}), never the worker, admission or settlement.
 */
package dev.vigilo.exec.view;
