package dev.vigilo.agent;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.common.errors.SecretValues;

/**
 * An {@link AgentObserver} that is shown every request, answer and event with the run's secret values masked, so
 * nothing an observer records (transcripts) can hold one. Attempt ends pass through: {@link Attempts} masks their
 * errors before it builds them.
 */
final class MaskingObserver implements AgentObserver {
    private final AgentObserver observer;
    private final SecretValues secrets;

    private MaskingObserver(AgentObserver observer, SecretValues secrets) {
        this.observer = observer;
        this.secrets = secrets;
    }

    /** {@code observer} itself when there is nothing to mask or nothing observes. */
    static AgentObserver of(AgentObserver observer, SecretValues secrets) {
        return secrets.isEmpty() || observer == AgentObserver.NONE ? observer : new MaskingObserver(observer, secrets);
    }

    @Override
    public void onAttemptStart(int attempt) {
        observer.onAttemptStart(attempt);
    }

    @Override
    public void onRequest(int attempt, JsonNode request) {
        observer.onRequest(attempt, secrets.mask(request));
    }

    @Override
    public void onResponse(int attempt, int status, JsonNode response) {
        observer.onResponse(attempt, status, secrets.mask(response));
    }

    @Override
    public void onEvent(int attempt, JsonNode event) {
        observer.onEvent(attempt, secrets.mask(event));
    }

    @Override
    public void onToolResult(int attempt, String callId, String name, String content, boolean isError) {
        observer.onToolResult(attempt, secrets.mask(callId), secrets.mask(name), secrets.mask(content), isError);
    }

    @Override
    public void onCachedAnswer(int attempt, String key) {
        observer.onCachedAnswer(attempt, key);
    }

    @Override
    public void onAttemptEnd(AgentAttempt attempt) {
        observer.onAttemptEnd(attempt);
    }
}
