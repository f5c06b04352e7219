package dev.vigilo.checkpoint;

import dev.vigilo.common.errors.DamagedException;
import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.common.retry.RetryPolicy;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.lance.Dataset;
import org.lance.index.Index;

/**
 * Reads MemWAL state that Lance 7.0.0 does not expose to Java, from the files of a local log
 * directory.
 *
 * <p>Shard manifest ({@code _mem_wal/<shard>/manifest/<bit-reversed version as 64 binary
 * digits>.binpb}; the highest version is current). Field numbers observed on disk: 2 = writer
 * epoch, 6 = current generation, 8 = repeated flushed generation {1 = generation, 2 = folder name
 * such as {@code 8b6c604f_gen_1}}.
 *
 * <p>MemWAL index details (index {@code __lance_mem_wal} of the base table): protobuf Any {2 =
 * value}; value field 9 = repeated merged generation {1 = {1 = shard uuid, 16 bytes}, 2 =
 * generation}.
 */
final class MemWalFiles {
    private MemWalFiles() {}

    /**
     * One flushed generation of a shard: its number and the folder (a Lance dataset) under the
     * shard directory.
     */
    record Generation(long number, String folder) {}

    /** The current manifest of one shard. */
    record ShardManifest(ShardId shard, long version, long epoch, long currentGeneration, List<Generation> flushed) {
        static ShardManifest empty(ShardId shard) {
            return new ShardManifest(shard, -1, 0, 0, List.of());
        }
    }

    /** One stored manifest version of a shard, as needed by cleanup. */
    record ManifestFile(String name, long version, long replayAfterWalPosition, long maxFlushedGeneration) {}

    /**
     * Every manifest version stored for {@code shard}, oldest first. A version that disappears
     * between list and read (removed by a concurrent cleanup) is left out.
     */
    static List<ManifestFile> manifestFiles(LogFiles files, ShardId shard) {
        String dir = "_mem_wal/" + shard + "/manifest";
        List<ManifestFile> out = new ArrayList<>();
        for (String n : files.list(dir)) {
            if (!n.endsWith(".binpb") || n.length() != 64 + 6) {
                continue;
            }
            Optional<byte[]> bytes = files.read(dir + "/" + n);
            if (bytes.isEmpty()) {
                continue;
            }
            long replayAfter = 0, maxGen = 0;
            for (Protobuf.Entry e : Protobuf.parse(bytes.get())) {
                if (e.wireType() == 0 && e.field() == 3) {
                    replayAfter = e.varint();
                } else if (e.wireType() == 2 && e.field() == 8) {
                    for (Protobuf.Entry f : Protobuf.parse(e.bytes())) {
                        if (f.wireType() == 0 && f.field() == 1) {
                            maxGen = Math.max(maxGen, f.varint());
                        }
                    }
                }
            }
            out.add(new ManifestFile(n, bitReversed(n.substring(0, 64)), replayAfter, maxGen));
        }
        out.sort(java.util.Comparator.comparingLong(ManifestFile::version));
        return out;
    }

    /** A WAL file name's position, or -1 if the name is not a WAL entry. */
    static long walPosition(String fileName) {
        if (!fileName.endsWith(".arrow") || fileName.length() != 64 + 6) {
            return -1;
        }
        try {
            return bitReversed(fileName.substring(0, 64));
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /**
     * Generation number of a generation folder name {@code <8 hex>_gen_<N>}, or -1 for any other
     * name.
     */
    static long generationOfFolder(String name) {
        java.util.regex.Matcher m = GEN_FOLDER.matcher(name);
        return m.matches() ? Long.parseLong(m.group(1)) : -1;
    }

    private static final java.util.regex.Pattern GEN_FOLDER =
            java.util.regex.Pattern.compile("[0-9a-f]{8}_gen_([0-9]{1,18})");

    private static long bitReversed(String digits) {
        return Long.parseUnsignedLong(new StringBuilder(digits).reverse().toString(), 2);
    }

    static List<ShardId> shards(LogFiles files) {
        List<ShardId> out = new ArrayList<>();
        for (String name : files.list("_mem_wal")) {
            try {
                out.add(new ShardId(UUID.fromString(name)));
            } catch (IllegalArgumentException notAShard) {
                // Not a shard folder; MemWAL keeps only shard folders here today, but tolerate
                // others.
            }
        }
        out.sort(java.util.Comparator.comparing(ShardId::toString));
        return out;
    }

    /**
     * The version of {@code shard}'s current (highest) manifest, -1 if it has none: one listing, no read. A version's
     * file never changes once written (a new state is a new version), so an unchanged version means unchanged
     * contents.
     */
    static long currentManifestVersion(LogFiles files, ShardId shard) {
        String name = newest(files.list("_mem_wal/" + shard + "/manifest"));
        return name == null ? -1 : bitReversed(name.substring(0, 64));
    }

    /** The name of the highest manifest version among {@code names}, null if there is none. */
    private static String newest(List<String> names) {
        long best = -1;
        String bestName = null;
        for (String n : names) {
            if (!n.endsWith(".binpb") || n.length() != 64 + 6) {
                continue;
            }
            long v = bitReversed(n.substring(0, 64));
            if (bestName == null || Long.compareUnsigned(v, best) > 0) {
                best = v;
                bestName = n;
            }
        }
        return bestName;
    }

    /**
     * Re-reads of a shard's manifest that a newer one superseded and removed between list and read: at once (a newer
     * manifest is already there, nothing to wait for), 11 reads in all.
     */
    private static final RetryPolicy SUPERSEDED =
            new RetryPolicy(11, Duration.ZERO, Duration.ZERO, e -> e instanceof ManifestSuperseded);

    /** The manifest read vanished: a newer one superseded it (retried by {@link #SUPERSEDED}). */
    private static final class ManifestSuperseded extends UnavailableException {
        ManifestSuperseded(ShardId shard) {
            super("MemWAL manifest of shard " + shard + " keeps disappearing");
        }
    }

    static ShardManifest manifest(LogFiles files, ShardId shard) {
        return SUPERSEDED.run(attempt -> readManifest(files, shard));
    }

    private static ShardManifest readManifest(LogFiles files, ShardId shard) {
        String dir = "_mem_wal/" + shard + "/manifest";
        String bestName = newest(files.list(dir));
        if (bestName == null) {
            return ShardManifest.empty(shard);
        }
        long best = bitReversed(bestName.substring(0, 64));
        Optional<byte[]> bytes = files.read(dir + "/" + bestName);
        if (bytes.isEmpty()) {
            // A newer manifest superseded and removed it between list and read: list again.
            throw new ManifestSuperseded(shard);
        }
        long epoch = 0, current = 0;
        List<Generation> gens = new ArrayList<>();
        for (Protobuf.Entry e : Protobuf.parse(bytes.get())) {
            if (e.wireType() == 0 && e.field() == 2) {
                epoch = e.varint();
            } else if (e.wireType() == 0 && e.field() == 6) {
                current = e.varint();
            } else if (e.wireType() == 2 && e.field() == 8) {
                long g = -1;
                String folder = null;
                for (Protobuf.Entry f : Protobuf.parse(e.bytes())) {
                    if (f.wireType() == 0 && f.field() == 1) {
                        g = f.varint();
                    } else if (f.wireType() == 2 && f.field() == 2) {
                        folder = new String(f.bytes(), java.nio.charset.StandardCharsets.UTF_8);
                    }
                }
                if (g < 0 || folder == null) {
                    throw new DamagedException("malformed flushed generation in " + dir + "/" + bestName);
                }
                gens.add(new Generation(g, folder));
            }
        }
        gens.sort(java.util.Comparator.comparingLong(Generation::number));
        return new ShardManifest(shard, best, epoch, current, List.copyOf(gens));
    }

    /**
     * Highest merged generation per shard, as recorded in the base table's MemWAL index at {@code
     * base}'s version. Lance keeps one entry per shard (a watermark): every generation up to it is
     * merged.
     */
    static Map<ShardId, Long> mergedGenerations(Dataset base) {
        Map<ShardId, Long> out = new HashMap<>();
        for (Index ix : base.getIndexes()) {
            if (!"__lance_mem_wal".equals(ix.name()) || ix.indexDetails().isEmpty()) {
                continue;
            }
            for (Protobuf.Entry any : Protobuf.parse(ix.indexDetails().get())) {
                if (any.wireType() != 2 || any.field() != 2) {
                    continue;
                }
                for (Protobuf.Entry mg : Protobuf.parse(any.bytes())) {
                    if (mg.wireType() != 2 || mg.field() != 9) {
                        continue;
                    }
                    UUID uuid = null;
                    long gen = 0;
                    for (Protobuf.Entry f : Protobuf.parse(mg.bytes())) {
                        if (f.wireType() == 2 && f.field() == 1) {
                            for (Protobuf.Entry u : Protobuf.parse(f.bytes())) {
                                if (u.wireType() == 2 && u.field() == 1 && u.bytes().length == 16) {
                                    ByteBuffer bb = ByteBuffer.wrap(u.bytes());
                                    uuid = new UUID(bb.getLong(), bb.getLong());
                                }
                            }
                        } else if (f.wireType() == 0 && f.field() == 2) {
                            gen = f.varint();
                        }
                    }
                    if (uuid != null) {
                        out.merge(new ShardId(uuid), gen, Math::max);
                    }
                }
            }
        }
        return out;
    }
}
