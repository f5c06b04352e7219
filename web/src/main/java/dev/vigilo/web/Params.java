package dev.vigilo.web;

import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.input.Ids;
import dev.vigilo.common.input.Names;
import io.javalin.http.Context;
import java.util.Optional;
import java.util.UUID;

/** Reads path and query parameters; anything malformed is invalid input (400) with a one-line reason. */
final class Params {
    /** Longest query value read (ids, cursors, names, paths); longer ones are refused before any parsing. */
    static final int MAX_VALUE = 4_096;

    private Params() {}

    static UUID runId(Context ctx) {
        return Ids.uuid(ctx.pathParam("run"), "run", "run id", "see the runs page for run ids");
    }

    /**
     * A case of a run as the path names it ({@code /runs/{run}/cases/{ordinal}...}): the one parser of that pair for
     * the case, transcript, kept-file and review routes, so they read and refuse it alike.
     */
    record CaseRef(UUID run, long ordinal) {
        /** The case page's path. */
        String path() {
            return "/runs/" + run + "/cases/" + ordinal;
        }
    }

    /** The run id and ordinal of a case route ({@code {run}}, {@code {ordinal}}): malformed ones are 400s. */
    static CaseRef caseRef(Context ctx) {
        return new CaseRef(runId(ctx), ordinal(ctx, "ordinal"));
    }

    static UUID uploadId(Context ctx) {
        return Ids.uuid(ctx.pathParam("dataset"), "dataset", "upload id", "see the datasets page for upload ids");
    }

    static String segment(Context ctx, String name) {
        return Names.segment(ctx.pathParam(name), name + " name");
    }

    /** A non-negative number in a path parameter. */
    static long ordinal(Context ctx, String name) {
        return number(ctx.pathParam(name), name, 0, Long.MAX_VALUE);
    }

    static Optional<String> query(Context ctx, String name) {
        String v = ctx.queryParam(name);
        if (v == null || v.isEmpty()) {
            return Optional.empty();
        }
        if (v.length() > MAX_VALUE) {
            throw new InvalidInputException(name + " is longer than " + MAX_VALUE + " characters");
        }
        return Optional.of(v);
    }

    static long number(Context ctx, String name, long min, long max, long otherwise) {
        return query(ctx, name).map(v -> number(v, name, min, max)).orElse(otherwise);
    }

    static long number(String text, String name, long min, long max) {
        try {
            long n = Long.parseLong(text);
            if (n < min || n > max) {
                throw new NumberFormatException();
            }
            return n;
        } catch (NumberFormatException e) {
            throw new InvalidInputException(
                    name + " " + Names.quote(text) + " is not a whole number in " + min + ".." + max);
        }
    }
}
