package dev.vigilo.web;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.common.errors.DamagedException;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.errors.NotFoundException;
import dev.vigilo.exec.view.CaseResults;
import dev.vigilo.exec.view.RunTranscripts;
import io.javalin.http.Context;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;

/**
 * A run's case transcripts (docs/transcripts.md): the transcript of one attempt of a case, paged like the transcript
 * viewer and rendered by the same code ({@link SessionPages}), and the first events of the last attempt embedded in
 * the case's page. In a run of several epochs each epoch has its own attempts: the pages take {@code epoch=E}
 * (default the last epoch, as {@code vigilo run transcript --epoch}), and a run of one epoch has only epoch 1. The case's receipt names its transcripts ({@link CaseResults#find}); each is read through
 * {@link RunTranscripts#write}, which verifies it against the receipt's reference and has the session-log reader
 * stream its committed events, of which at most one page is kept.
 */
final class CaseTranscriptPages {
    /** Events of the last attempt shown on the case page itself. */
    static final int EMBEDDED_EVENTS = 50;

    private final CaseResults cases;
    private final RunTranscripts transcripts;
    private final Views views;
    private final Function<UUID, Map<String, Double>> passScores;

    /**
     * @param passScores each evaluator's pass score by name for a run (empty when its plan cannot be read)
     */
    private final RunNames names;

    CaseTranscriptPages(
            CaseResults cases,
            RunTranscripts transcripts,
            Views views,
            Function<UUID, Map<String, Double>> passScores,
            RunNames names) {
        this.names = names;
        this.cases = cases;
        this.transcripts = transcripts;
        this.views = views;
        this.passScores = passScores;
    }

    /** A transcript page; {@code epoch} 0 for a run of one epoch (its links name no epoch). */
    static String href(UUID run, long ordinal, int epoch, int attempt, long from) {
        return "/runs/" + run + "/cases/" + ordinal + "/transcript?" + (epoch > 0 ? "epoch=" + epoch + "&" : "")
                + "attempt=" + attempt + (from > 0 ? "&from=" + from : "");
    }

    /** One page of an attempt's transcript. */
    private Transcript.Page read(UUID run, RunTranscripts.Attempt attempt, long from, int limit) {
        return Transcript.read(out -> transcripts.write(run, attempt, from, out), from, limit);
    }

    /**
     * Adds the case page's transcript section: every attempt's link, and the last attempt's first
     * {@value #EMBEDDED_EVENTS} events. A transcript that cannot be read (damaged) is named on the page, which still
     * shows everything else.
     */
    void embed(Map<String, Object> m, UUID run, long ordinal, CaseResults.CaseDetail d) {
        // In a run of several epochs, the last epoch's attempts (each epoch's are linked from the epoch table).
        int epoch = d.epochs().size();
        List<RunTranscripts.Attempt> attempts =
                epoch == 0 ? d.transcripts() : d.epochs().get(epoch - 1).transcripts();
        m.put("has_transcripts", !attempts.isEmpty());
        if (attempts.isEmpty()) {
            return;
        }
        m.put("transcripts", attemptLinks(run, ordinal, epoch, attempts, -1));
        RunTranscripts.Attempt last = attempts.get(attempts.size() - 1);
        m.put("last_transcript", href(run, ordinal, epoch, last.attempt(), 0));
        m.put("last_attempt", last.attempt());
        m.put("last_epoch", epoch == 0 ? null : epoch);
        try {
            Transcript.Page page = read(run, last, 0, EMBEDDED_EVENTS);
            m.put("rows", Conversation.rows(page.events()));
            m.put("embedded_more", page.nextFrom().isPresent());
        } catch (DamagedException e) {
            m.put("transcript_damaged", e.getMessage());
        }
    }

    /**
     * The judges' model calls of the case's answering attempt (the last one, of the last epoch), by evaluator name
     * ({@link JudgeCalls}); empty when the case has no transcript or it cannot be read (the transcript section says
     * why).
     */
    Map<String, List<Map<String, Object>>> judgeCalls(UUID run, CaseResults.CaseDetail d) {
        int epoch = d.epochs().size();
        List<RunTranscripts.Attempt> attempts =
                epoch == 0 ? d.transcripts() : d.epochs().get(epoch - 1).transcripts();
        if (attempts.isEmpty()) {
            return Map.of();
        }
        RunTranscripts.Attempt last = attempts.get(attempts.size() - 1);
        try {
            Transcript.Page page = Transcript.read(
                    out -> transcripts.write(run, last, 0, out), 0, JudgeCalls.MAX_EVENTS, JudgeCalls::isJudgeEvent);
            return JudgeCalls.byEvaluator(page.events());
        } catch (DamagedException e) {
            return Map.of();
        }
    }

    /** Links to each attempt's transcript; {@code epoch} 0 for a run of one epoch. */
    static List<Map<String, Object>> attemptLinks(
            UUID run, long ordinal, int epoch, List<RunTranscripts.Attempt> attempts, int current) {
        List<Map<String, Object>> links = new ArrayList<>();
        for (RunTranscripts.Attempt a : attempts) {
            Map<String, Object> l = new LinkedHashMap<>();
            l.put("attempt", a.attempt());
            l.put("epoch", epoch);
            l.put("href", href(run, ordinal, epoch, a.attempt(), 0));
            l.put("length", Views.bytes(a.transcript().length()));
            l.put("current", a.attempt() == current);
            links.add(l);
        }
        return links;
    }

    /**
     * The case, the chosen epoch ({@code ?epoch=}, default the last; 0 in a run of one epoch) with its attempts, and
     * the chosen attempt ({@code ?attempt=}, default the last).
     */
    private record Chosen(
            UUID run,
            long ordinal,
            CaseResults.CaseDetail detail,
            int epoch,
            List<RunTranscripts.Attempt> attempts,
            RunTranscripts.Attempt attempt) {}

    private Chosen choose(Context ctx) {
        Params.CaseRef ref = Params.caseRef(ctx);
        UUID run = ref.run();
        long ordinal = ref.ordinal();
        CaseResults.CaseDetail d = cases.find(run, ordinal)
                .orElseThrow(() -> new NotFoundException("case " + ordinal + " of run " + run + " has not been"
                        + " executed (its chunk is queued, running or failed, or the run has no such case)"));
        int epochs = Math.max(1, d.epochs().size());
        int e = RunTranscripts.epoch(run, epochs, Params.query(ctx, "epoch").map(x ->
                (int) Params.number(x, "epoch", 1, Integer.MAX_VALUE)));
        List<RunTranscripts.Attempt> attempts =
                d.epochs().isEmpty() ? d.transcripts() : d.epochs().get(e - 1).transcripts();
        if (attempts.isEmpty()) {
            throw new NotFoundException("case " + ordinal + " of run " + run + " has no transcript: its receipt was"
                    + " written before transcripts were recorded");
        }
        String of = d.epochs().isEmpty() ? "" : " in epoch " + e;
        int last = attempts.get(attempts.size() - 1).attempt();
        int n = (int) Params.number(ctx, "attempt", 1, Integer.MAX_VALUE, last);
        RunTranscripts.Attempt a = attempts.stream()
                .filter(x -> x.attempt() == n)
                .findFirst()
                .orElseThrow(() -> new InvalidInputException("attempt " + n + ": case " + ordinal + " of run " + run
                        + " made " + attempts.size() + " attempts" + of + "; choose 1 to " + attempts.size()));
        return new Chosen(run, ordinal, d, d.epochs().isEmpty() ? 0 : e, attempts, a);
    }

    void page(Context ctx) {
        Chosen c = choose(ctx);
        TranscriptScan.Request request = TranscriptPage.request(ctx);
        String caseId = c.detail().result().caseId();
        Map<String, Object> m =
                views.page(names.of(c.run()) + " · transcript of case " + c.ordinal() + " · run " + c.run(), "runs");
        m.put("id", c.run().toString());
        m.put("ordinal", c.ordinal());
        m.put("case_id", caseId);
        m.put("attempt", c.attempt().attempt());
        m.put("attempt_count", c.attempts().size());
        m.put("epoch", c.epoch() == 0 ? null : c.epoch());
        m.put("epoch_count", c.detail().epochs().size());
        m.put("epoch_query", c.epoch() == 0 ? "" : "epoch=" + c.epoch() + "&");
        List<Map<String, Object>> epochLinks = new ArrayList<>();
        for (CaseResults.EpochDetail e : c.detail().epochs()) {
            epochLinks.add(Map.of(
                    "epoch",
                    e.epoch(),
                    "href",
                    href(c.run(), c.ordinal(), e.epoch(), lastAttempt(e.transcripts()), 0),
                    "current",
                    e.epoch() == c.epoch()));
        }
        m.put("epochs", epochLinks);
        m.put(
                "attempts",
                attemptLinks(
                        c.run(),
                        c.ordinal(),
                        c.epoch(),
                        c.attempts(),
                        c.attempt().attempt()));
        // A slice of a transcript container names where it starts (receipt version 8); a whole object only its key.
        m.put(
                "key",
                c.attempt().transcript().key().value()
                        + c.attempt().offset().stream()
                                .mapToObj(o -> " at byte " + o)
                                .findFirst()
                                .orElse(""));
        // Not "length": inside the template's {{#key}} section the key string is the context, and Mustache would
        // find String.length() (the key's character count) before this value.
        m.put("transcript_length", Views.bytes(c.attempt().transcript().length()));
        m.put("sha", c.attempt().transcript().sha256().toHex());
        Map<String, String> fixed = new LinkedHashMap<>();
        if (c.epoch() > 0) {
            fixed.put("epoch", Integer.toString(c.epoch()));
        }
        fixed.put("attempt", Integer.toString(c.attempt().attempt()));
        String path = "/runs/" + c.run() + "/cases/" + c.ordinal() + "/transcript";
        m.put("api_href", new TranscriptPage.Address("/api" + path, fixed).href());
        TranscriptPage.put(
                m,
                out -> transcripts.write(c.run(), c.attempt(), 0, out),
                request,
                new TranscriptPage.Address(path, fixed),
                passScores.apply(c.run()));
        views.render(ctx, "case-transcript", m);
    }

    void api(Context ctx) {
        Chosen c = choose(ctx);
        long from = Params.number(ctx, "from", 0, Long.MAX_VALUE / 2, 0);
        int limit = (int) Params.number(ctx, "limit", 1, 1000, SessionPages.EVENTS_PER_PAGE);
        Transcript.Page page = read(c.run(), c.attempt(), from, limit);
        ObjectNode o = Dashboard.JSON
                .createObjectNode()
                .put("run_id", c.run().toString())
                .put("ordinal", c.ordinal())
                .put("case_id", c.detail().result().caseId())
                .put("attempt", c.attempt().attempt())
                .put("attempts", c.attempts().size());
        if (c.epoch() > 0) {
            o.put("epoch", c.epoch()).put("epochs", c.detail().epochs().size());
        }
        putRef(o.putObject("transcript"), c.attempt());
        o.set("verify", DatagenPages.parse(page.report().toJson()));
        SessionPages.putJson(o, page);
        Dashboard.json(ctx, o);
    }

    /** The case API's {@code transcripts}: each attempt's reference and its page; {@code epoch} 0 with one epoch. */
    static void putAll(ObjectNode o, UUID run, long ordinal, int epoch, List<RunTranscripts.Attempt> attempts) {
        ArrayNode a = o.putArray("transcripts");
        for (RunTranscripts.Attempt t : attempts) {
            ObjectNode n = a.addObject().put("attempt", t.attempt());
            putRef(n, t);
            n.put(
                    "api",
                    "/api/runs/" + run + "/cases/" + ordinal + "/transcript?"
                            + (epoch > 0 ? "epoch=" + epoch + "&" : "") + "attempt=" + t.attempt());
        }
    }

    /** The last attempt's number (1 when there is none: a link then leads to the page's own explanation). */
    static int lastAttempt(List<RunTranscripts.Attempt> attempts) {
        return attempts.isEmpty() ? 1 : attempts.get(attempts.size() - 1).attempt();
    }

    private static void putRef(ObjectNode n, RunTranscripts.Attempt t) {
        n.put("key", t.transcript().key().value())
                .put("length", t.transcript().length())
                .put("sha256", t.transcript().sha256().toHex());
        t.offset().ifPresent(o -> n.put("offset", o)); // a slice of a transcript container
    }
}
