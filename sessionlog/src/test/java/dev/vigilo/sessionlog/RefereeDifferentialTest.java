package dev.vigilo.sessionlog;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Fallback identity: on logs without protocol metadata, Vigilo's verdict, event counts, torn-tail truncation point
 * and recovered events (the sequence of event types, stored then closers) equal the official reader's (the
 * referee), for both encodings: {@code session.jsonl.zstd} and the uncompressed {@code session.jsonl}.
 */
class RefereeDifferentialTest {
    @TempDir
    Path dir;

    record Row(String name, String referee, String vigilo, boolean same) {}

    static List<String> vigiloTypes(Path f) {
        List<String> types = new ArrayList<>();
        LogReader.Outcome o = LogReader.read(
                f,
                (buf, off, len, kept, whole) ->
                        kept.forEach(e -> types.add(e.get("type").textValue())));
        if (!o.report().accepted()) {
            return List.of();
        }
        o.closers().forEach(c -> types.add(c.get("type").textValue()));
        return types;
    }

    static Row compare(String name, Path f) {
        JsonNode ref = Referee.get().judge(f);
        VerifyReport v = SessionVerifier.verify(f);
        String rv = ref.path("verdict").asText();
        String rs = rv + " events=" + ref.path("events").asLong() + " stored="
                + ref.path("stored").asLong(0) + " closers="
                + ref.path("closers").asLong(0);
        String vs = v.verdict() + " events=" + v.events() + " stored=" + v.stored() + " closers=" + v.closers();
        if (v.accepted()) {
            // the published reader's truncation point of a torn tail (its torn.truncateTo)
            JsonNode torn = ref.path("torn");
            rs += " torn=" + (torn.isObject() ? torn.path("truncateTo").asText() : "no");
            vs += " torn=" + (v.tornOffset() == null ? "no" : v.tornOffset());
        }
        String encoding = f.getFileName().toString().endsWith(".jsonl") ? "none" : "zstd";
        if (!v.compression().jsonName().equals(encoding)) {
            vs += " compression=" + v.compression().jsonName();
        }
        boolean same = rs.equals(vs);
        if (same && v.accepted()) {
            List<String> refTypes = new ArrayList<>();
            ref.path("types").forEach(t -> refTypes.add(t.asText()));
            List<String> ours = vigiloTypes(f);
            long ourLast = v.events() == 0 ? -1 : v.stored() + v.closers() - 1;
            if (!refTypes.equals(ours) || ref.path("lastSeq").asLong(-1) != ourLast) {
                same = false;
                vs += " types differ: " + ours;
                rs += " types: " + refTypes;
            }
        }
        if (!same) {
            rs += " | " + ref.path("error").asText("");
            vs += " | " + v.error();
        }
        return new Row(name, rs, vs, same);
    }

    static List<Row> judgeAll(Path dir, Map<String, byte[]> cases) throws Exception {
        return judgeAll(dir, cases, Compression.ZSTD);
    }

    /** Writes each case as {@code NAME.jsonl.zstd} or {@code NAME.jsonl} (the referee picks its decoder by the name). */
    static List<Row> judgeAll(Path dir, Map<String, byte[]> cases, Compression as) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try {
            List<Future<Row>> fs = new ArrayList<>();
            for (var e : cases.entrySet()) {
                Path f = dir.resolve(e.getKey() + as.suffix());
                Files.write(f, e.getValue());
                fs.add(pool.submit(() -> compare(e.getKey(), f)));
            }
            List<Row> rows = new ArrayList<>();
            for (Future<Row> f : fs) {
                rows.add(f.get());
            }
            for (var e : cases.keySet()) {
                Files.deleteIfExists(dir.resolve(e + as.suffix()));
            }
            return rows;
        } finally {
            pool.shutdownNow();
        }
    }

    private static void report(List<Row> rows) {
        for (Row r : rows) {
            System.out.println((r.same ? "same " : "DIFF ") + r.name + ": referee=" + r.referee
                    + (r.same ? "" : " vigilo=" + r.vigilo));
        }
        assertThat(rows.stream()
                        .filter(r -> !r.same)
                        .map(r -> r.name + ": referee=" + r.referee + " vigilo=" + r.vigilo))
                .isEmpty();
    }

    @Test
    void corpusShapesMatchTheReferee() throws Exception {
        List<Row> rows = judgeAll(dir, Corpus.shapes());
        assertThat(rows).hasSizeGreaterThan(50);
        // the corpus exercises both verdicts
        assertThat(rows.stream().filter(r -> r.referee.startsWith("ACCEPT"))).hasSizeGreaterThan(10);
        assertThat(rows.stream().filter(r -> r.referee.startsWith("REJECT"))).hasSizeGreaterThan(10);
        report(rows);
    }

    /** Logs written by the official writer itself (gen-big.mjs --mode official, packed chunk rows), cut at seeded points. */
    @Test
    void officialWriterLogsAndTheirTruncationsMatchTheReferee() throws Exception {
        Referee ref = Referee.get();
        Path log = dir.resolve("official.jsonl.zstd");
        ProcessBuilder pb = new ProcessBuilder(
                ref.dir.resolve("node_modules/.bin/node").toString(),
                Referee.sourceDir().resolve("gen-big.mjs").toString(),
                log.toString(),
                "0.3",
                "--mode",
                "official",
                "--chunks",
                "--corpus",
                "synthetic",
                "--quiet",
                "--seed",
                "7");
        pb.environment().put("DSH_REF", ref.dir.toString());
        Process p = pb.redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor()).as(out).isZero();
        byte[] b = Files.readAllBytes(log);
        Map<String, byte[]> cases = new java.util.LinkedHashMap<>();
        cases.put("official", b);
        java.util.Random r = new java.util.Random(77);
        for (int i = 0; i < 8; i++) {
            int cut = 1 + r.nextInt(b.length - 1);
            cases.put("official-cut-" + cut, java.util.Arrays.copyOf(b, cut));
        }
        List<Row> rows = judgeAll(dir, cases);
        assertThat(rows.get(0).referee).startsWith("ACCEPT");
        assertThat(Files.readString(dir.resolve("official.jsonl.zstd.meta.json")))
                .contains("\"mode\": \"official\"");
        // the same log uncompressed (what the official writer writes with compression "none"), cut likewise
        byte[] plain = PlainCorpus.twin(b);
        Map<String, byte[]> plainCases = new java.util.LinkedHashMap<>();
        plainCases.put("official-plain", plain);
        for (int i = 0; i < 12; i++) {
            int cut = 1 + r.nextInt(plain.length - 1);
            plainCases.put("official-plain-cut-" + cut, java.util.Arrays.copyOf(plain, cut));
        }
        List<Row> plainRows = judgeAll(dir, plainCases, Compression.NONE);
        assertThat(plainRows.get(0).referee).startsWith("ACCEPT");
        rows.addAll(plainRows);
        report(rows);
    }

    /** Each semantic rule of Session.fromRestore, exercised by cases the referee accepts and cases it rejects. */
    @Test
    void semanticRuleCasesMatchTheReferee() throws Exception {
        List<Row> rows = judgeAll(dir, SemanticCorpus.shapes());
        assertThat(rows.stream().filter(r -> r.referee.startsWith("ACCEPT"))).hasSizeGreaterThanOrEqualTo(10);
        assertThat(rows.stream().filter(r -> r.referee.startsWith("REJECT"))).hasSizeGreaterThanOrEqualTo(20);
        report(rows);
    }

    /** Content-level mutations (swapped/altered event fields) of a log that contains valid surface replacements. */
    @Test
    void seededContentMutationsMatchTheReferee() throws Exception {
        long[] seeds = new long[Integer.getInteger("vigilo.contentMutations", 72)];
        for (int i = 0; i < seeds.length; i++) {
            seeds[i] = 5000 + i;
        }
        List<Row> rows = judgeAll(dir, SemanticCorpus.mutations(seeds));
        // the mutations must not be trivially all-reject: some keep the log valid
        assertThat(rows.stream().filter(r -> r.referee.startsWith("ACCEPT"))).isNotEmpty();
        report(rows);
    }

    /** The uncompressed channel: the twin of every zstd shape that has one, plus shapes only a plain log has. */
    @Test
    void uncompressedShapesMatchTheReferee() throws Exception {
        Map<String, byte[]> cases = new java.util.LinkedHashMap<>();
        PlainCorpus.twins(Corpus.shapes()).forEach((k, v) -> cases.put("twin-" + k, v));
        cases.putAll(PlainCorpus.shapes());
        List<Row> rows = judgeAll(dir, cases, Compression.NONE);
        assertThat(rows).hasSizeGreaterThan(80);
        assertThat(rows.stream()
                        .filter(r -> r.referee.startsWith("ACCEPT")
                                && r.referee.contains("torn=")
                                && !r.referee.contains("torn=no")))
                .hasSizeGreaterThan(10);
        assertThat(rows.stream().filter(r -> r.referee.startsWith("REJECT"))).hasSizeGreaterThan(10);
        report(rows);
    }

    /** The semantic rules and content mutations, uncompressed. */
    @Test
    void uncompressedSemanticCasesAndContentMutationsMatchTheReferee() throws Exception {
        long[] seeds = new long[Integer.getInteger("vigilo.contentMutations", 72) / 2];
        for (int i = 0; i < seeds.length; i++) {
            seeds[i] = 7000 + i;
        }
        Map<String, byte[]> cases = new java.util.LinkedHashMap<>(PlainCorpus.twins(SemanticCorpus.shapes()));
        cases.putAll(PlainCorpus.twins(SemanticCorpus.mutations(seeds)));
        List<Row> rows = judgeAll(dir, cases, Compression.NONE);
        assertThat(rows.stream().filter(r -> r.referee.startsWith("ACCEPT"))).hasSizeGreaterThanOrEqualTo(10);
        assertThat(rows.stream().filter(r -> r.referee.startsWith("REJECT"))).hasSizeGreaterThanOrEqualTo(20);
        report(rows);
    }

    @Test
    void uncompressedSeededMutationsMatchTheReferee() throws Exception {
        long[] seeds = new long[Integer.getInteger("vigilo.mutations", 96)];
        for (int i = 0; i < seeds.length; i++) {
            seeds[i] = 3000 + i;
        }
        report(judgeAll(dir, PlainCorpus.mutations(seeds), Compression.NONE));
    }

    @Test
    void seededMutationsMatchTheReferee() throws Exception {
        long[] seeds = new long[Integer.getInteger("vigilo.mutations", 96)];
        for (int i = 0; i < seeds.length; i++) {
            seeds[i] = 1000 + i;
        }
        report(judgeAll(dir, Corpus.mutations(seeds)));
    }
}
