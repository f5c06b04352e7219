/**
 * Sandboxes for the commands of a case (docs/formats/agent-protocol.md, "Sandboxes"): a worker-owned root of
 * per-attempt directories ({@link dev.vigilo.agent.sandbox.Sandboxes}), one {@link
 * dev.vigilo.agent.sandbox.SandboxAttempt} per execution of a case that wraps every command's argv in {@code bwrap}
 * or {@code podman run}, and the files kept after it ({@link dev.vigilo.agent.sandbox.KeptFile}). Everything else
 * here is package-private.
 */
package dev.vigilo.agent.sandbox;
