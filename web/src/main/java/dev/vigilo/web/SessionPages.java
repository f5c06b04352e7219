package dev.vigilo.web;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.sessionlog.SessionCat;
import io.javalin.http.Context;
import io.javalin.http.HttpStatus;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The transcript viewer of session logs by path ({@code vigilo session view FILE}, and {@code /sessions} of
 * {@code vigilo serve}): the list of logs it may open, one log's reading view ({@link TranscriptPage}: the
 * conversation, the scoring, then storage and verification), and its events as JSON, paged by seq. Logs are opened by
 * path, confined by {@link SessionFiles}, through a {@link TranscriptSource}.
 */
final class SessionPages {
    /** Events of a page of the JSON API, unless it asks for another {@code limit}. */
    static final int EVENTS_PER_PAGE = 200;

    private final SessionFiles files;
    private final Views views;

    /** The most session logs the list shows (the newest). */
    static final int LISTED = 200;
    /** The most entries (files and directories) the list looks at under Vigilo home per request. */
    static final long LOOK_AT = 20_000;

    SessionPages(SessionFiles files, Views views) {
        this.files = files;
        this.views = views;
    }

    void listPage(Context ctx) {
        Map<String, Object> m = views.page("Session logs", "sessions");
        List<Map<String, Object>> rows = new ArrayList<>();
        for (Path f : files.files()) {
            rows.add(Map.of("path", f.toString(), "href", href(f.toString(), 0)));
        }
        m.put("files", rows);
        m.put("has_files", !rows.isEmpty());
        m.put("roots", files.roots().stream().map(Path::toString).toList());
        // The session logs under Vigilo home, so a person picks one rather than typing its path.
        SessionFiles.Found found = files.list(LISTED, LOOK_AT);
        List<Map<String, Object>> logs = new ArrayList<>();
        for (SessionFiles.Listed l : found.logs()) {
            // Shown below its root (the heading names it); the link carries the whole path.
            Path shown = files.roots().stream()
                    .filter(r -> l.path().startsWith(r))
                    .findFirst()
                    .map(r -> r.relativize(l.path()))
                    .orElse(l.path());
            logs.add(Map.of(
                    "path", shown.toString(),
                    "href", href(l.path().toString(), 0),
                    "bytes", Views.bytes(l.bytes()),
                    "modified", Views.time(l.modified())));
        }
        m.put("logs", logs);
        m.put("has_logs", !logs.isEmpty());
        m.put("has_roots", !files.roots().isEmpty());
        m.put("listed", Views.count(logs.size()));
        if (found.stopped()) {
            m.put("stopped", Views.count(found.looked()));
        }
        views.render(ctx, "sessions", m);
    }

    private static String href(String path, long from) {
        return "/sessions/view?path=" + URLEncoder.encode(path, StandardCharsets.UTF_8)
                + (from > 0 ? "&from=" + from : "");
    }

    private Transcript.Page read(Context ctx, Path[] file) {
        String path = Params.query(ctx, "path")
                .orElseThrow(() -> new InvalidInputException("give the session log as ?path=/absolute/path"));
        Path p = resolve(path);
        file[0] = p;
        long from = Params.number(ctx, "from", 0, Long.MAX_VALUE / 2, 0);
        int limit = (int) Params.number(ctx, "limit", 1, 1000, EVENTS_PER_PAGE);
        try (TranscriptSource.Opened opened = TranscriptSource.file(p).open()) {
            return Transcript.read(opened.file(), from, limit);
        }
    }

    /** A path the dashboard may open ({@link SessionFiles}); anything else is refused (403). */
    private Path resolve(String path) {
        try {
            return files.resolve(path);
        } catch (SessionFiles.Forbidden e) {
            throw new AccessGuard.Refused(HttpStatus.FORBIDDEN, e.getMessage());
        }
    }

    void viewApi(Context ctx) {
        Path[] file = new Path[1];
        Transcript.Page page = read(ctx, file);
        ObjectNode o = Dashboard.JSON.createObjectNode().put("path", file[0].toString());
        o.set("verify", parse(page.report().toJson()));
        putJson(o, page);
        Dashboard.json(ctx, o);
    }

    /** A page of events as the API gives it: {@code from}, {@code events}, {@code next_from}. */
    static void putJson(ObjectNode o, Transcript.Page page) {
        o.put("from", page.from());
        ArrayNode a = o.putArray("events");
        for (Transcript.Event e : page.events()) {
            if (e.json() != null) {
                a.add(e.json());
            } else {
                a.addObject().put("seq", e.seq()).put("oversized_bytes", e.bytes());
            }
        }
        if (page.nextFrom().isPresent()) {
            o.put("next_from", page.nextFrom().getAsLong());
        } else {
            o.putNull("next_from");
        }
    }

    void viewPage(Context ctx) {
        String path = Params.query(ctx, "path")
                .orElseThrow(() -> new InvalidInputException("give the session log as ?path=/absolute/path"));
        Path p = resolve(path);
        TranscriptScan.Request request = TranscriptPage.request(ctx);
        Map<String, Object> m = views.page("Transcript " + p.getFileName(), "sessions");
        m.put("path", p.toString());
        m.put("api_href", "/api/sessions/view?path=" + URLEncoder.encode(p.toString(), StandardCharsets.UTF_8));
        TranscriptPage.Address address = new TranscriptPage.Address("/sessions/view", Map.of("path", p.toString()));
        try (TranscriptSource.Opened opened = TranscriptSource.file(p).open()) {
            TranscriptPage.put(m, out -> SessionCat.cat(opened.file(), 0, out).report(), request, address, Map.of());
        }
        views.render(ctx, "session", m);
    }

    private static JsonNode parse(String json) {
        return DatagenPages.parse(json);
    }
}
