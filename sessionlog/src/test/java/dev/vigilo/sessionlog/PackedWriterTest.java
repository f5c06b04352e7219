package dev.vigilo.sessionlog;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayOutputStream;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The writer packs assistant/chunk runs into {@code *-chunks} rows exactly like the published writer. */
class PackedWriterTest {
    @TempDir
    Path dir;

    /** Plaintext of every frame of a log (frame 0 = header). */
    static List<byte[]> framePlaintexts(Path log) throws Exception {
        List<byte[]> out = new ArrayList<>();
        try (FileChannel ch = FileChannel.open(log)) {
            FrameScanner sc = new FrameScanner(ch, ch.size(), 0);
            byte[] buf = new byte[1 << 16];
            for (FrameScanner.Frame f; (f = sc.next()) != null; ) {
                ByteArrayOutputStream plain = new ByteArrayOutputStream();
                FrameCodec.decodeComplete(FrameCodec.readRange(ch, f.start(), f.end()), plain::write, buf);
                out.add(plain.toByteArray());
            }
        }
        return out;
    }

    /** The events of one batch plaintext, packed rows expanded. */
    static List<ObjectNode> events(byte[] plain) throws Exception {
        List<ObjectNode> out = new ArrayList<>();
        for (String line : new String(plain, StandardCharsets.UTF_8).split("\n")) {
            for (JsonNode e : EventRules.decodeStorageRecord(Json.MAPPER.readTree(line))) {
                out.add((ObjectNode) e);
            }
        }
        return out;
    }

    private static ObjectNode chunk(long time, int turn, int step, String kind, int index, String text) {
        ObjectNode e = Json.MAPPER.createObjectNode();
        e.put("type", "assistant/chunk").put("time", time);
        ObjectNode d = e.putObject("data");
        d.put("turn", turn).put("step", step);
        ObjectNode c = d.putObject("chunk");
        c.put("type", kind).put("index", index);
        if (kind.equals("tool-call-delta")) {
            c.put("id", text.startsWith("b") ? "call_b" : "call_a");
            if (!text.endsWith("!")) {
                c.put("name", "bash");
            }
            c.put("argumentsDelta", text);
        } else {
            c.put("text", text);
        }
        return e;
    }

    /** Batches covering every packing rule: run lengths 1..5, kind/index/step/id/name breaks, extra keys, a run split by a batch. */
    static List<List<ObjectNode>> edgeBatches() {
        List<List<ObjectNode>> batches = new ArrayList<>();
        long t = 1_760_000_000_000L;
        List<ObjectNode> b = new ArrayList<>();
        b.add(WriterTest.todo(0));
        ObjectNode esc = WriterTest.todo(1); // JSON.stringify escaping: lower-case \u001b, raw DEL and U+2028
        ((ArrayNode) esc.get("data").get("todos")).add("\u001b[31mred\u0000\u001f\u007f\u2028\t\"\\/ é😀");
        b.add(esc);
        for (int i = 0; i < 5; i++) {
            b.add(chunk(t += i, 1, 1, "text-delta", 0, "t\u001b" + i)); // run of 5
        }
        for (int i = 0; i < 2; i++) {
            b.add(chunk(t += 3, 1, 1, "reasoning-delta", 0, "r" + i)); // run of 2: verbatim
        }
        for (int i = 0; i < 3; i++) {
            b.add(chunk(t += 1, 1, 1, "reasoning-delta", 1, "r" + i)); // index break, run of 3
        }
        for (int i = 0; i < 4; i++) {
            b.add(chunk(t += 2, 1, 1, "tool-call-delta", 2, "a" + i)); // tool call with name
        }
        for (int i = 0; i < 3; i++) {
            b.add(chunk(t += 2, 1, 1, "tool-call-delta", 2, "b" + i)); // id break
        }
        for (int i = 0; i < 3; i++) {
            b.add(chunk(t += 2, 1, 1, "tool-call-delta", 2, "a" + i + "!")); // name absent: breaks the run
        }
        batches.add(b);
        b = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            b.add(chunk(t += 1, 1, i < 2 ? 1 : 2, "text-delta", 0, "s" + i)); // step break at the third
        }
        ObjectNode extra = chunk(t += 1, 1, 2, "text-delta", 0, "x");
        ((ObjectNode) extra.get("data").get("chunk"))
                .put("providerMeta", 1); // not whitelisted: verbatim, breaks the run
        b.add(chunk(t += 1, 1, 2, "text-delta", 0, "y0"));
        b.add(extra);
        b.add(chunk(t += 1, 1, 2, "text-delta", 0, "y1"));
        for (int i = 0; i < 2; i++) {
            b.add(chunk(t -= 5, 1, 2, "text-delta", 0, "neg" + i)); // negative dt, run of 3 with y1
        }
        b.add(chunk(t += 1, 1, 2, "text-delta", 0, "split0")); // this run continues into the next batch
        b.add(chunk(t += 1, 1, 2, "text-delta", 0, "split1"));
        batches.add(b);
        b = new ArrayList<>();
        for (int i = 2; i < 6; i++) {
            b.add(chunk(t += 1, 1, 2, "text-delta", 0, "split" + i));
        }
        ObjectNode ign = chunk(t += 1, 1, 2, "text-delta", 0, "ign");
        ign.put("ignorable", true); // envelope not exactly {type, seq, time, data}: verbatim
        b.add(ign);
        batches.add(b);
        return batches;
    }

    /** The official packChunkRuns over {@code batch} (seqs from {@code seq0}), serialized with JSON.stringify. */
    static String officialPack(Path work, List<ObjectNode> batch, long seq0) throws Exception {
        ArrayNode arr = Json.MAPPER.createArrayNode();
        long s = seq0;
        for (ObjectNode e : batch) {
            ObjectNode c = Json.MAPPER.createObjectNode();
            c.put("type", e.get("type").textValue()).put("seq", s++);
            e.fields().forEachRemaining(f -> {
                if (!f.getKey().equals("type") && !f.getKey().equals("seq")) {
                    c.set(f.getKey(), f.getValue());
                }
            });
            arr.add(c);
        }
        Path in = Files.writeString(work.resolve("pack-in-" + seq0 + ".json"), arr.toString());
        Referee ref = Referee.get();
        String script = "import {readFileSync} from 'node:fs'; import {pathToFileURL} from 'node:url';"
                + "const {packChunkRuns} = await import(pathToFileURL(process.argv[1] + '/node_modules/@deepseek-ai/dsh-session/lib/index.js').href);"
                + "process.stdout.write(packChunkRuns(JSON.parse(readFileSync(process.argv[2], 'utf8'))).map((r) => JSON.stringify(r)).join('\\n') + '\\n')";
        Process p = new ProcessBuilder(
                        ref.dir.resolve("node_modules/.bin/node").toString(),
                        "--input-type=module",
                        "-e",
                        script,
                        ref.dir.toString(),
                        in.toString())
                .redirectErrorStream(true)
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor()).as(out).isZero();
        return out;
    }

    @Test
    void edgeCaseBatchesAreWrittenExactlyAsTheOfficialPackChunkRuns() throws Exception {
        Path f = dir.resolve("edge.jsonl.zstd");
        List<List<ObjectNode>> batches = edgeBatches();
        List<Long> starts = new ArrayList<>();
        try (SessionLogWriter w =
                SessionLogWriter.create(f, WriterTest.HEADER, new LockFileEpochSource(), WriterOptions.plain())) {
            for (List<ObjectNode> b : batches) {
                starts.add(w.append(b).firstSeq().value());
            }
        }
        List<byte[]> frames = framePlaintexts(f);
        assertThat(frames).hasSize(batches.size() + 1);
        String all = "";
        for (int i = 0; i < batches.size(); i++) {
            String ours = new String(frames.get(i + 1), StandardCharsets.UTF_8);
            assertThat(ours).as("batch " + i).isEqualTo(officialPack(dir, batches.get(i), starts.get(i)));
            all += ours;
        }
        // the batches really exercise all three row kinds and verbatim chunks
        assertThat(all)
                .contains("{\"type\":\"text-chunks\",\"seq0\":2,")
                .contains("\\u001b")
                .contains("\"reasoning-chunks\"")
                .contains("\"tool-call-chunks\"")
                .contains("\"name\":\"bash\"")
                .contains("\"type\":\"assistant/chunk\"");
        JsonNode ref = Referee.get().judge(f);
        VerifyReport v = SessionVerifier.verify(f);
        assertThat(v.accepted()).as(v.error()).isTrue();
        assertThat(ref.path("verdict").asText()).isEqualTo("ACCEPT");
        assertThat(ref.path("events").asLong()).isEqualTo(v.events());
        assertThat(ref.path("stored").asLong())
                .isEqualTo(v.stored())
                .isEqualTo(batches.stream().mapToLong(List::size).sum());
    }

    @Test
    void packedLogsAreAcceptedByTheRefereeWithTheSameEventsAndCatExpandsThem() throws Exception {
        for (WriterOptions opts : List.of(WriterOptions.plain(), WriterOptions.defaults())) {
            Path f = dir.resolve("packed-" + opts.commitRecords() + ".jsonl.zstd");
            List<ObjectNode> input = new ArrayList<>();
            try (SessionLogWriter w = SessionLogWriter.create(f, WriterTest.HEADER, new LockFileEpochSource(), opts)) {
                for (List<ObjectNode> b : edgeBatches()) {
                    w.append(b);
                    input.addAll(b);
                }
            }
            assertThat(new String(LogBuilder.concat(framePlaintexts(f)), StandardCharsets.UTF_8))
                    .contains("-chunks\"");
            RefereeDifferentialTest.Row row = RefereeDifferentialTest.compare("packed", f);
            assertThat(row.same()).as(row.referee() + " / " + row.vigilo()).isTrue();
            assertThat(row.referee()).startsWith("ACCEPT");
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            SessionCat.CatReport cr = SessionCat.cat(f, 0, out);
            assertThat(cr.report().accepted()).isTrue();
            String text = out.toString(StandardCharsets.UTF_8);
            assertThat(text).doesNotContain("-chunks\"");
            List<ObjectNode> catted = events(out.toByteArray());
            assertThat(catted).hasSize(input.size());
            for (int i = 0; i < input.size(); i++) {
                ObjectNode got = catted.get(i).deepCopy();
                long seq = got.remove("seq").longValue();
                // with P1 each batch's commit record takes a seq of its own, so cat's seqs have gaps there
                if (!opts.commitRecords()) {
                    assertThat(seq).isEqualTo(i);
                }
                assertThat(got).as("event " + i).isEqualTo(input.get(i));
            }
        }
    }

    @Test
    void packingCanBeSwitchedOff() throws Exception {
        Path f = dir.resolve("unpacked.jsonl.zstd");
        try (SessionLogWriter w = SessionLogWriter.create(
                f,
                WriterTest.HEADER,
                new LockFileEpochSource(),
                WriterOptions.plain().withPackChunks(false))) {
            for (List<ObjectNode> b : edgeBatches()) {
                w.append(b);
            }
        }
        assertThat(new String(LogBuilder.concat(framePlaintexts(f)), StandardCharsets.UTF_8))
                .doesNotContain("-chunks\"");
        assertThat(SessionVerifier.verify(f).accepted()).isTrue();
    }

    /** Re-writing an official-writer log (gen-big --mode official --chunks) batch by batch reproduces its bytes. */
    @Test
    void rewritingAnOfficialChunkedLogReproducesItsBytes() throws Exception {
        Referee ref = Referee.get();
        Path official = dir.resolve("official.jsonl.zstd");
        ProcessBuilder pb = new ProcessBuilder(
                ref.dir.resolve("node_modules/.bin/node").toString(),
                Referee.sourceDir().resolve("gen-big.mjs").toString(),
                official.toString(),
                "1",
                "--mode",
                "official",
                "--chunks",
                "--corpus",
                "synthetic",
                "--quiet",
                "--seed",
                "11",
                "--turns",
                "6");
        pb.environment().put("DSH_REF", ref.dir.toString());
        Process p = pb.redirectErrorStream(true).start();
        String log = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor()).as(log).isZero();
        List<byte[]> theirs = framePlaintexts(official);
        JsonNode h = Json.MAPPER.readTree(new String(theirs.get(0), StandardCharsets.UTF_8));
        SessionHeader header = new SessionHeader(
                h.get("id").textValue(),
                h.path("cwd").textValue(),
                h.get("createdAt").longValue(),
                h.get("delegationDepth").longValue());
        Path ours = dir.resolve("ours.jsonl.zstd");
        try (SessionLogWriter w = SessionLogWriter.create(
                ours, header, new LockFileEpochSource(), new WriterOptions(false, false, false, true))) {
            for (int i = 1; i < theirs.size(); i++) {
                List<ObjectNode> batch = events(theirs.get(i));
                batch.forEach(e -> e.remove("seq"));
                w.append(batch);
            }
        }
        List<byte[]> mine = framePlaintexts(ours);
        assertThat(mine).hasSize(theirs.size());
        int packed = 0;
        for (int i = 0; i < theirs.size(); i++) {
            String t = new String(theirs.get(i), StandardCharsets.UTF_8);
            assertThat(new String(mine.get(i), StandardCharsets.UTF_8))
                    .as("frame " + i)
                    .isEqualTo(t);
            if (t.contains("\"text-chunks\"")) {
                packed++;
            }
        }
        assertThat(packed).as("batches with packed rows").isGreaterThan(0);
        assertThat(Files.readAllBytes(ours))
                .as("compressed bytes (zstd level 3, checksum)")
                .isEqualTo(Files.readAllBytes(official));
    }
}
