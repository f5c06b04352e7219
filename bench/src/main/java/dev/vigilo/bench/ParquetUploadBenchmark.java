package dev.vigilo.bench;

import dev.vigilo.control.ControlDatabase;
import dev.vigilo.control.ControlSettings;
import dev.vigilo.dataset.DatasetCatalog;
import dev.vigilo.dataset.DatasetEntry;
import dev.vigilo.dataset.UploadProgress;
import dev.vigilo.dataset.UploadRequest;
import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.ObjectStores;
import dev.vigilo.storage.StoreSpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.parquet.conf.PlainParquetConfiguration;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.example.data.simple.SimpleGroupFactory;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.example.ExampleParquetWriter;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.io.LocalOutputFile;
import org.apache.parquet.schema.LogicalTypeAnnotation;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName;
import org.apache.parquet.schema.Types;

/**
 * Dataset upload from Parquet against the JSON lines path, on the same cases, in one run.
 *
 * <p>Workload: {@link UploadBenchmark#generate}'s {@code CASES} cases (default 1,000,000) as JSON lines, and the same
 * cases as a Snappy-compressed Parquet file with typed columns ({@code id}, {@code input} a struct, {@code expected},
 * {@code group}, {@code tags} a list, {@code metadata} a struct; 128 MiB row groups, as pyarrow and DuckDB write),
 * whose rows the upload turns into exactly the JSON lines' bytes (the two datasets' memberships are checked equal).
 * Each side uploads into a fresh local object store, once to warm up, then three times, alternating; the medians and
 * their ratio are printed.
 *
 * <p>Run: {@code bench/run upload parquet [CASES]}.
 */
public final class ParquetUploadBenchmark {
    private ParquetUploadBenchmark() {}

    public static void main(String[] args) throws Exception {
        long cases = args.length > 0 ? Long.parseLong(args[0]) : 1_000_000L;
        Path work = Files.createTempDirectory("vigilo-bench-upload-parquet-");
        try {
            Path jsonl = work.resolve("cases.jsonl");
            Path parquet = work.resolve("cases.parquet");
            long bytes = UploadBenchmark.generate(jsonl, cases);
            writeParquet(parquet, cases);
            System.out.printf(
                    "workload: %,d cases, JSON lines %.1f MB, Parquet %.1f MB%n",
                    cases, bytes / 1e6, Files.size(parquet) / 1e6);
            try (ControlDatabase control =
                    ControlDatabase.open(new ControlSettings.Embedded(work.resolve("postgres")))) {
                DatasetCatalog catalog = new DatasetCatalog(control.jdbi());
                List<Long> fromJsonl = new ArrayList<>();
                List<Long> fromParquet = new ArrayList<>();
                for (int round = 0; round < 4; round++) {
                    long t0 = System.nanoTime();
                    DatasetEntry a = upload(catalog, jsonl, work.resolve("jsonl-" + round), cases);
                    long t1 = System.nanoTime();
                    DatasetEntry b = upload(catalog, parquet, work.resolve("parquet-" + round), cases);
                    long t2 = System.nanoTime();
                    if (!a.membershipUuid().equals(b.membershipUuid())) {
                        throw new IllegalStateException("the Parquet upload's membership " + b.membershipUuid()
                                + " differs from the JSON lines upload's " + a.membershipUuid());
                    }
                    BenchStores.deleteTree(work.resolve("jsonl-" + round));
                    BenchStores.deleteTree(work.resolve("parquet-" + round));
                    if (round > 0) {
                        fromJsonl.add(t1 - t0);
                        fromParquet.add(t2 - t1);
                    }
                    System.out.printf(
                            "round %d%s: jsonl %.2f s, parquet %.2f s%n",
                            round, round == 0 ? " (warm-up)" : "", (t1 - t0) / 1e9, (t2 - t1) / 1e9);
                }
                double j = UploadBenchmark.median(fromJsonl) / 1e9;
                double p = UploadBenchmark.median(fromParquet) / 1e9;
                System.out.printf("%nupload from JSON lines : %8.2f s  %,12.0f cases/s%n", j, cases / j);
                System.out.printf("upload from Parquet    : %8.2f s  %,12.0f cases/s%n", p, cases / p);
                System.out.printf(
                        "ratio parquet/jsonl time: %6.2fx  (Parquet reaches %.0f%% of the JSON lines throughput)%n",
                        p / j, 100 * j / p);
            }
        } finally {
            BenchStores.deleteTree(work);
        }
    }

    private static DatasetEntry upload(DatasetCatalog catalog, Path file, Path objects, long cases) {
        try (ObjectStore store = ObjectStores.open(new StoreSpec.Local("bench", objects))) {
            DatasetEntry entry = catalog.upload(UploadRequest.of(file), store, UploadProgress.NONE);
            if (entry.caseCount() != cases) {
                throw new IllegalStateException("uploaded " + entry.caseCount() + " cases, expected " + cases);
            }
            return entry;
        }
    }

    /** The cases of {@link UploadBenchmark#generate} as typed Parquet rows, in the same field order. */
    static void writeParquet(Path file, long cases) throws IOException {
        MessageType schema = Types.buildMessage()
                .required(PrimitiveTypeName.BINARY)
                .as(LogicalTypeAnnotation.stringType())
                .named("id")
                .requiredGroup()
                .required(PrimitiveTypeName.BINARY)
                .as(LogicalTypeAnnotation.stringType())
                .named("prompt")
                .required(PrimitiveTypeName.INT64)
                .named("n")
                .named("input")
                .required(PrimitiveTypeName.BINARY)
                .as(LogicalTypeAnnotation.stringType())
                .named("expected")
                .required(PrimitiveTypeName.BINARY)
                .as(LogicalTypeAnnotation.stringType())
                .named("group")
                .requiredList()
                .requiredElement(PrimitiveTypeName.BINARY)
                .as(LogicalTypeAnnotation.stringType())
                .named("tags")
                .requiredGroup()
                .required(PrimitiveTypeName.BINARY)
                .as(LogicalTypeAnnotation.stringType())
                .named("source")
                .named("metadata")
                .named("cases");
        SimpleGroupFactory rows = new SimpleGroupFactory(schema);
        try (ParquetWriter<Group> writer = ExampleParquetWriter.builder(new LocalOutputFile(file))
                .withConf(new PlainParquetConfiguration())
                .withType(schema)
                .withCompressionCodec(CompressionCodecName.SNAPPY)
                .build()) {
            for (long i = 0; i < cases; i++) {
                Group row = rows.newGroup().append("id", "case-" + i);
                row.addGroup("input")
                        .append(
                                "prompt",
                                "Summarize ticket " + i
                                        + ": the customer reports intermittent failures after the upgrade.")
                        .append("n", i);
                row.append("expected", Long.toString(i % 97)).append("group", "g" + (i % 7));
                Group tags = row.addGroup("tags");
                tags.addGroup("list").append("element", "t" + (i % 3));
                tags.addGroup("list").append("element", "bench");
                row.addGroup("metadata").append("source", "bench");
                writer.write(row);
            }
        }
    }
}
