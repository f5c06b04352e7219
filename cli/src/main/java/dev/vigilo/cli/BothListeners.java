package dev.vigilo.cli;

import dev.vigilo.exec.Service;
import dev.vigilo.exec.UsageSummary;
import dev.vigilo.exec.worker.Worker;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.UUID;

/**
 * One {@link Worker.Listener} that passes every event to two others, first then second (the worker takes one listener;
 * {@code vigilo worker} reports to its progress display and, with {@code --metrics-port}, to its metrics).
 */
record BothListeners(Worker.Listener first, Worker.Listener second) implements Worker.Listener {
    BothListeners {
        Objects.requireNonNull(first, "first");
        Objects.requireNonNull(second, "second");
    }

    @Override
    public void chunkClaimed(UUID runId, long chunkIndex) {
        first.chunkClaimed(runId, chunkIndex);
        second.chunkClaimed(runId, chunkIndex);
    }

    @Override
    public void chunkCompleted(UUID runId, long chunkIndex, int cases) {
        first.chunkCompleted(runId, chunkIndex, cases);
        second.chunkCompleted(runId, chunkIndex, cases);
    }

    @Override
    public void caseExecuted(UUID runId, Duration agentTime, boolean errored) {
        first.caseExecuted(runId, agentTime, errored);
        second.caseExecuted(runId, agentTime, errored);
    }

    @Override
    public void casesCarried(UUID runId, long chunkIndex, int cases) {
        first.casesCarried(runId, chunkIndex, cases);
        second.casesCarried(runId, chunkIndex, cases);
    }

    @Override
    public void modelUsage(UUID runId, UsageSummary usage) {
        first.modelUsage(runId, usage);
        second.modelUsage(runId, usage);
    }

    @Override
    public void chunkGivenBack(UUID runId, long chunkIndex, String outcome) {
        first.chunkGivenBack(runId, chunkIndex, outcome);
        second.chunkGivenBack(runId, chunkIndex, outcome);
    }

    @Override
    public void heartbeat(int held, int renewed) {
        first.heartbeat(held, renewed);
        second.heartbeat(held, renewed);
    }

    @Override
    public void runSettled(UUID runId, String status, Duration took) {
        first.runSettled(runId, status, took);
        second.runSettled(runId, status, took);
    }

    @Override
    public void limiterLeased(Worker.LimiterReading limiter) {
        first.limiterLeased(limiter);
        second.limiterLeased(limiter);
    }

    @Override
    public void outageBegan(Service service, String target, Instant since, String error) {
        first.outageBegan(service, target, since, error);
        second.outageBegan(service, target, since, error);
    }

    @Override
    public void outageWaited(Service service, String target, int failures) {
        first.outageWaited(service, target, failures);
        second.outageWaited(service, target, failures);
    }

    @Override
    public void outageEnded(Service service, String target, Duration lasted) {
        first.outageEnded(service, target, lasted);
        second.outageEnded(service, target, lasted);
    }
}
