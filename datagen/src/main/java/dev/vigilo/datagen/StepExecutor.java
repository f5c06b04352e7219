package dev.vigilo.datagen;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.common.concurrent.Threads;
import dev.vigilo.common.process.ProcessTree;
import dev.vigilo.config.Template;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Executes one attempt of a command, http, chat or template step against an item's fields; returns field
 * updates (and, for chat steps, usage tags).
 */
final class StepExecutor {
    private static final int MAX_DUMP = 16 * 1024;

    private final HttpClient http = HttpClient.newHttpClient();
    private final ChatStep chat;

    /** {@code chat} runs the chat steps (null: the pipeline has none). */
    StepExecutor(ChatStep chat) {
        this.chat = chat;
    }

    /** A pipeline without chat steps. */
    StepExecutor() {
        this(null);
    }

    /** What attempt {@code attempt} of the step produced. */
    StepResult run(StepSpec step, String itemId, ObjectNode fields, int attempt)
            throws StepFailure, InterruptedException {
        return switch (step.kind()) {
            case COMMAND -> StepResult.of(command(step, itemId, fields, attempt));
            case HTTP -> StepResult.of(http(step, fields));
            case CHAT -> chat.run(step, fields, attempt);
            case TEMPLATE ->
                StepResult.of(Json.MAPPER.createObjectNode().put(step.outputField(), render(step.template(), fields)));
            default -> throw new IllegalArgumentException("not an executable step kind: " + step.kind());
        };
    }

    /** A step's {@code {{field}}} template rendered over the item's fields (the one rendering: {@link Template}). */
    static String render(String template, ObjectNode fields) {
        return Template.of(template).render(fields::get);
    }

    private ObjectNode command(StepSpec step, String itemId, ObjectNode fields, int attempt)
            throws StepFailure, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(step.command());
        Map<String, String> env = pb.environment();
        env.put("VIGILO_ITEM_ID", itemId);
        env.put("VIGILO_STEP", step.name());
        env.put("VIGILO_ATTEMPT", Integer.toString(attempt));
        // Everything the attempt starts carries its tag, so its end kills what the command left behind, even a
        // process that left the session with setsid (docs/formats/agent-protocol.md, "Process reaping").
        ProcessTree tree = ProcessTree.tag(env);
        Process p;
        try {
            p = pb.start();
        } catch (IOException e) {
            throw new StepFailure(
                    "CommandStartError", "cannot start " + step.command() + ": " + e.getMessage(), trace(e));
        }
        boolean reaped = false;
        try {
            // stdin, stdout and stderr are drained on their own threads so a chatty command cannot
            // deadlock on a pipe.
            Thread in = Threads.startDaemon("step-io", () -> {
                try (OutputStream os = p.getOutputStream()) {
                    os.write(Json.canonical(fields).getBytes(StandardCharsets.UTF_8));
                } catch (IOException ignored) {
                    // The command may exit without reading its input; that is its
                    // business.
                }
            });
            var out = new java.util.concurrent.CompletableFuture<byte[]>();
            var err = new java.util.concurrent.CompletableFuture<byte[]>();
            Threads.startDaemon("step-io", () -> drain(p.getInputStream(), out));
            Threads.startDaemon("step-io", () -> drain(p.getErrorStream(), err));
            boolean finished = p.waitFor(step.timeout().toMillis(), TimeUnit.MILLISECONDS);
            // Before stdout is read to its end: a leftover process holding it open would hold the step for ever.
            tree.reap(Optional.of(p.toHandle()));
            reaped = true;
            if (!finished) {
                throw new StepFailure(
                        "StepTimeout",
                        "command "
                                + step.command()
                                + " did not finish within "
                                + step.timeout().toSeconds()
                                + " s and was killed",
                        tail(err.getNow(new byte[0])));
            }
            in.join(1000);
            String stdout = new String(out.join(), StandardCharsets.UTF_8);
            String stderr = new String(err.join(), StandardCharsets.UTF_8);
            if (p.exitValue() != 0) {
                throw new StepFailure(
                        "CommandExitError",
                        "command "
                                + step.command()
                                + " exited with status "
                                + p.exitValue()
                                + "; stdout: "
                                + tail(stdout.getBytes(StandardCharsets.UTF_8)),
                        tail(stderr.getBytes(StandardCharsets.UTF_8)));
            }
            JsonNode parsed;
            try {
                parsed = Json.parse(stdout);
            } catch (JsonProcessingException e) {
                throw new StepFailure(
                        "InvalidJsonOutput",
                        "command "
                                + step.command()
                                + " printed invalid JSON ("
                                + e.getOriginalMessage()
                                + "); stdout: "
                                + tail(stdout.getBytes(StandardCharsets.UTF_8)),
                        trace(e));
            }
            if (parsed == null || !parsed.isObject()) {
                throw new StepFailure(
                        "InvalidJsonOutput",
                        "command "
                                + step.command()
                                + " must print one JSON object of field updates; got: "
                                + tail(stdout.getBytes(StandardCharsets.UTF_8)),
                        tail(stderr.getBytes(StandardCharsets.UTF_8)));
            }
            return (ObjectNode) parsed;
        } finally {
            if (!reaped) {
                // Interrupted while waiting: the command and what it started go too.
                tree.reap(Optional.of(p.toHandle()));
            }
        }
    }

    private static void drain(java.io.InputStream in, java.util.concurrent.CompletableFuture<byte[]> sink) {
        try (in) {
            sink.complete(in.readAllBytes());
        } catch (IOException e) {
            sink.complete(new byte[0]);
        }
    }

    private ObjectNode http(StepSpec step, ObjectNode fields) throws StepFailure, InterruptedException {
        ObjectNode body = Json.MAPPER.createObjectNode().put("model", step.model());
        body.putArray("messages").addObject().put("role", "user").put("content", render(step.template(), fields));
        HttpResponse<String> resp;
        try {
            resp = http.send(
                    HttpRequest.newBuilder(URI.create(step.url()))
                            .timeout(step.timeout())
                            .header("Content-Type", "application/json")
                            .POST(HttpRequest.BodyPublishers.ofString(Json.canonical(body)))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
        } catch (java.net.http.HttpTimeoutException e) {
            throw new StepFailure(
                    "StepTimeout",
                    "POST " + step.url() + " timed out after " + step.timeout().toSeconds() + " s",
                    trace(e));
        } catch (IOException | IllegalArgumentException e) {
            throw new StepFailure("HttpError", "POST " + step.url() + " failed: " + e.getMessage(), trace(e));
        }
        if (resp.statusCode() / 100 != 2) {
            throw new StepFailure(
                    "HttpStatusError",
                    "POST "
                            + step.url()
                            + " returned HTTP "
                            + resp.statusCode()
                            + ": "
                            + tail(resp.body().getBytes(StandardCharsets.UTF_8)),
                    null);
        }
        try {
            JsonNode r = Json.parse(resp.body());
            JsonNode content = r.path("choices").path(0).path("message").path("content");
            if (!content.isTextual()) {
                throw new StepFailure(
                        "InvalidHttpResponse",
                        "no choices[0].message.content in: " + tail(resp.body().getBytes(StandardCharsets.UTF_8)),
                        null);
            }
            return Json.MAPPER.createObjectNode().put(step.outputField(), content.textValue());
        } catch (JsonProcessingException e) {
            throw new StepFailure("InvalidHttpResponse", "response is not JSON: " + e.getOriginalMessage(), trace(e));
        }
    }

    private static String tail(byte[] b) {
        String s = new String(b, StandardCharsets.UTF_8);
        return s.length() <= MAX_DUMP ? s : "..." + s.substring(s.length() - MAX_DUMP);
    }

    static String trace(Throwable t) {
        StringWriter w = new StringWriter();
        t.printStackTrace(new PrintWriter(w));
        return w.toString();
    }
}
