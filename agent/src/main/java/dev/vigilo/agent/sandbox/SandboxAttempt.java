package dev.vigilo.agent.sandbox;

import java.nio.file.Path;
import java.util.Collection;
import java.util.List;

/**
 * One execution of a case in a sandbox: a fresh writable work directory (a copy of the profile's {@code workdir}) and
 * a private {@code /tmp}, both removed by {@link #close()}. Every command of the case (agent, command evaluators,
 * command tools, MCP servers) is started through {@link #wrap}, with {@link #launchDirectory()} as the directory it
 * is started in. Thread-safe: commands of one attempt may be started from several threads.
 */
public interface SandboxAttempt extends AutoCloseable {
    /** The settings this attempt runs with. */
    SandboxSettings settings();

    /**
     * The argv that runs {@code argv} inside the sandbox, its working directory the work directory.
     *
     * @param argv             the command as the profile gives it (a relative program or argument is relative to
     *                         the work directory)
     * @param environmentNames the variables of the command's environment that the sandboxed command must see (bwrap
     *                         passes the whole environment; podman passes exactly these)
     */
    List<String> wrap(List<String> argv, Collection<String> environmentNames);

    /** The directory the wrapped argv is started in (the work directory on the host). */
    Path launchDirectory();

    /** The work directory on the host. */
    Path workDirectory();

    /**
     * A directory on the host whose files the sandboxed commands see at {@link #inside}: the private {@code /tmp}
     * (a command agent's events file is created here).
     */
    Path scratchDirectory();

    /** The path under which the sandboxed commands see {@code hostPath}, a path in the work or scratch directory. */
    String inside(Path hostPath);

    /**
     * Empties the work directory and the private {@code /tmp} and copies {@code workdir} in again: each attempt of
     * a retried agent call starts from the same files.
     */
    void reset();

    /** The regular files of the work directory matching {@code keep_files}, bounded; none without globs. */
    List<KeptFile> keptFiles();

    /** Kills what is left of the sandbox's processes and removes its directories. Idempotent. */
    @Override
    void close();
}
