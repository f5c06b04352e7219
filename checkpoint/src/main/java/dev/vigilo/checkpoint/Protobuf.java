package dev.vigilo.checkpoint;

import dev.vigilo.common.errors.DamagedException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Minimal protobuf wire-format reader. Lance 7.0.0's Java API exposes neither MemWAL shard
 * manifests nor the merged-generation list of the MemWAL index, so {@link MemWalFiles} decodes them
 * from their protobuf bytes.
 */
final class Protobuf {
    private Protobuf() {}

    /** A decoded field: number, wire type, and either a varint or a byte range. */
    record Entry(int field, int wireType, long varint, byte[] bytes) {}

    static List<Entry> parse(byte[] b) {
        List<Entry> out = new ArrayList<>();
        int[] pos = {0};
        while (pos[0] < b.length) {
            long key = varint(b, pos);
            int field = (int) (key >>> 3);
            int wt = (int) (key & 7);
            switch (wt) {
                case 0 -> out.add(new Entry(field, wt, varint(b, pos), null));
                case 1 -> pos[0] += 8;
                case 2 -> {
                    int len = Math.toIntExact(varint(b, pos));
                    if (pos[0] + len > b.length) {
                        throw new DamagedException("truncated protobuf message");
                    }
                    out.add(new Entry(field, wt, 0, Arrays.copyOfRange(b, pos[0], pos[0] + len)));
                    pos[0] += len;
                }
                case 5 -> pos[0] += 4;
                default -> throw new DamagedException("unsupported protobuf wire type " + wt);
            }
        }
        return out;
    }

    private static long varint(byte[] b, int[] pos) {
        long r = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            if (pos[0] >= b.length) {
                throw new DamagedException("truncated protobuf varint");
            }
            int x = b[pos[0]++] & 0xff;
            r |= (long) (x & 0x7f) << shift;
            if ((x & 0x80) == 0) {
                return r;
            }
        }
        throw new DamagedException("malformed protobuf varint");
    }
}
