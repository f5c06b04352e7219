package dev.vigilo.datagen;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.checkpoint.CheckpointLog;
import dev.vigilo.checkpoint.ExperimentLease;
import dev.vigilo.checkpoint.ExperimentRecords;
import dev.vigilo.checkpoint.LogWriter;
import dev.vigilo.checkpoint.WriterOptions;
import dev.vigilo.common.concurrent.Threads;
import dev.vigilo.common.errors.ConflictException;
import dev.vigilo.common.errors.DamagedException;
import dev.vigilo.common.errors.FencedException;
import dev.vigilo.common.errors.VigiloException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The durable, fenced division of one experiment's items between the {@code datagen run} processes working on it
 * (docs/datagen.md, "Many processes"). Items are split into {@link #BUCKETS} buckets by a hash of their root item id
 * (an item and the children an expand step gives it share a bucket). A process:
 *
 * <ul>
 *   <li>joins by taking the lowest free <em>slot</em> {@code k}: the experiment lease {@code assign/slot-k} (an OS
 *       lock locally, an S3 lease object renewed by a heartbeat otherwise) plus the record {@code slot-k} that counts
 *       the slot's <em>incarnations</em>; it writes through writer {@link #writerName(int) runner[-k]} (its own
 *       MemWAL shard), whose opening replays and fences the slot's previous incarnation;
 *   <li>claims a bucket by a compare-and-set of the record {@code bucket-b} = {@code {slot, incarnation}}; only the
 *       holder writes the bucket's items;
 *   <li>may claim a bucket whose holder is dead (its slot lease is free or its slot has a newer incarnation) only
 *       after that holder's writer was <em>recovered</em>: someone holding the slot lease opened and closed the
 *       writer, which replays its WAL (so every acknowledged batch becomes visible) and raises its shard epoch (so
 *       a holder that is in fact still alive is fenced and can write nothing more); the slot record then says
 *       {@code replayed} for a newer incarnation;
 *   <li>releases a bucket ({@code released}, {@code done} when all its items finished) only after flushing its
 *       writer, so a later claimer's fold sees all of it.
 * </ul>
 *
 * A bucket that was never claimed counts as held by slot 0 incarnation 0, the writer {@code runner} of runs made
 * before buckets existed. Not thread-safe, except the heartbeat, which runs on its own thread.
 */
final class Assignment implements AutoCloseable {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(Assignment.class);

    /** Buckets of an experiment (fixed: every process of every version must agree). */
    static final int BUCKETS = 32;
    /** Processes that can work on one experiment at once. */
    static final int MAX_SLOTS = 64;
    /** Where the records and slot leases live, beside log.lance. */
    static final String DIR = "assign";
    /** The records' format version (their {@code version} field); a newer one is refused. */
    static final int FORMAT_VERSION = 1;

    /** What a claim found. */
    enum Outcome {
        /** The bucket is ours now. */
        CLAIMED,
        /** Held by a live process, or its holder's recovery is under way: try again later. */
        HELD,
        /** Another process finished it since our last fold: nothing to do. */
        DONE_ELSEWHERE
    }

    /**
     * A claim's result; {@code foldCurrent}: the fold made after {@code snapshot} holds the bucket's latest state (no
     * one held it since, and no recovery made new events visible), so no new fold is needed.
     */
    record Claim(Outcome outcome, boolean foldCurrent) {}

    /** Records as read just before a fold. */
    static final class Snapshot {
        private final Map<Integer, String> bucketVersions = new HashMap<>();
        private final Map<Integer, SlotRecord> slots = new HashMap<>();

        /** Whether slot {@code k} had been recovered past incarnation {@code i} when the snapshot was taken. */
        boolean recovered(int k, long i) {
            SlotRecord s = slots.get(k);
            return s != null && s.incarnation() > i && s.replayed();
        }
    }

    /** A slot record: its incarnation, holder, whether that incarnation replayed its writer, whether it left. */
    record SlotRecord(String holder, long incarnation, boolean replayed, boolean released, String version) {}

    /** A bucket record: its holder's slot and incarnation, whether it was released, and finished. */
    record BucketRecord(int slot, long incarnation, boolean released, boolean done, String version) {}

    /**
     * Runs the slot lease's renewals: {@link #TIMER} on a timer thread of its own; a test beats by hand, to move time
     * without waiting for it.
     */
    interface Heartbeat {
        /** Calls {@code beat} every {@code every} until the returned handle is closed. */
        AutoCloseable start(Duration every, Runnable beat);
    }

    /** Beats on a daemon timer thread, {@code every} apart (fixed delay). */
    static final Heartbeat TIMER = (every, beat) -> {
        ScheduledExecutorService timer =
                Executors.newSingleThreadScheduledExecutor(Threads.daemonFactory("datagen-slot-heartbeat"));
        timer.scheduleWithFixedDelay(beat, every.toMillis(), every.toMillis(), TimeUnit.MILLISECONDS);
        return timer::shutdownNow;
    };

    private final CheckpointLog log;
    private final ExperimentRecords records;
    private final Duration ttl;
    private final Clock clock;
    private final Heartbeat beats;
    private final String holder;
    private int slot = -1;
    private long incarnation;
    private String slotVersion;
    private ExperimentLease lease;
    private AutoCloseable heartbeat;
    private volatile boolean leaseLost;

    private Assignment(CheckpointLog log, Duration ttl, Clock clock, Heartbeat beats) {
        this.log = log;
        this.records = log.records(DIR);
        this.ttl = ttl;
        this.clock = Objects.requireNonNull(clock, "clock");
        this.beats = Objects.requireNonNull(beats, "beats");
        this.holder = holderId();
    }

    /** The writer name of slot {@code k}: {@code runner} for slot 0 (the one writer of earlier versions). */
    static String writerName(int k) {
        return k == 0 ? "runner" : "runner-" + k;
    }

    /** The bucket of an item tree (0 .. BUCKETS-1): the first 4 bytes of sha256(root item id). */
    static int bucketOf(String rootItemId) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(rootItemId.getBytes(StandardCharsets.UTF_8));
            int v = ((d[0] & 0xff) << 24) | ((d[1] & 0xff) << 16) | ((d[2] & 0xff) << 8) | (d[3] & 0xff);
            return Integer.remainderUnsigned(v, BUCKETS);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Joins the experiment: takes the lowest free slot and a new incarnation of it, starts the heartbeat. The caller
     * then opens {@link #writerName()} and calls {@link #writerReplayed()}.
     *
     * @param ttl how long a slot lease outlives its holder's last heartbeat (S3 roots only)
     * @throws ConflictException every slot is taken
     */
    static Assignment join(CheckpointLog log, Duration ttl) {
        return join(log, ttl, Clock.systemUTC(), TIMER);
    }

    /**
     * {@link #join(CheckpointLog, Duration)} with S3 slot leases judged on {@code clock} and renewed by {@code beats}.
     */
    static Assignment join(CheckpointLog log, Duration ttl, Clock clock, Heartbeat beats) {
        Assignment a = new Assignment(log, ttl, clock, beats);
        try {
            a.takeSlot();
            return a;
        } catch (RuntimeException e) {
            a.close();
            throw e;
        }
    }

    private void takeSlot() {
        for (int k = 0; k < MAX_SLOTS; k++) {
            Optional<ExperimentLease> l = log.tryAcquireLease(leaseName(k), ttl, clock);
            if (l.isEmpty()) {
                continue;
            }
            SlotRecord cur = readSlot(k).orElse(null);
            long inc = (cur == null ? 0 : cur.incarnation()) + 1;
            Optional<String> v =
                    records.write(slotName(k), cur == null ? null : cur.version(), slotJson(holder, inc, false, false));
            if (v.isEmpty()) {
                l.get().release();
                continue;
            }
            slot = k;
            incarnation = inc;
            slotVersion = v.get();
            lease = l.get();
            startHeartbeat();
            LOG.info(
                    "joined {} as slot {} (incarnation {}, writer {})",
                    log.location().uri(),
                    k,
                    inc,
                    writerName());
            return;
        }
        throw new ConflictException("all " + MAX_SLOTS + " process slots of experiment "
                + log.location().experiment() + " are taken; wait for a process to finish before starting another");
    }

    private void startHeartbeat() {
        heartbeat = beats.start(Duration.ofMillis(Math.max(200, ttl.toMillis() / 3)), this::renew);
    }

    private void renew() {
        try {
            synchronized (this) {
                if (lease != null) {
                    lease.renew();
                }
            }
        } catch (FencedException e) {
            leaseLost = true;
            LOG.warn("slot {} of {} was taken over: {}", slot, log.location().uri(), e.getMessage());
        } catch (RuntimeException e) {
            // A failed renewal is retried at the next beat; past the lease duration others may take over, and our
            // writer is then fenced before it can write anything more.
            LOG.warn("renewing slot {} lease failed: {}", slot, e.getMessage());
        }
    }

    /** This process's writer name. */
    String writerName() {
        return writerName(slot);
    }

    int slot() {
        return slot;
    }

    long incarnation() {
        return incarnation;
    }

    /** Whether another process took this process's slot over (its writer is fenced then). */
    boolean leaseLost() {
        return leaseLost;
    }

    /** Our writer is open: its previous incarnation's WAL is replayed and fenced. */
    void writerReplayed() {
        Optional<String> v = records.write(slotName(slot), slotVersion, slotJson(holder, incarnation, true, false));
        if (v.isEmpty()) {
            throw new FencedException(
                    "slot " + slot + " of experiment " + log.location().experiment()
                            + " was taken over while this run started; another process took its place");
        }
        slotVersion = v.get();
    }

    /** Reads every bucket record and the slot records they name; call just before folding the log. */
    Snapshot snapshot() {
        Snapshot s = new Snapshot();
        for (int b = 0; b < BUCKETS; b++) {
            Optional<BucketRecord> r = readBucket(b);
            s.bucketVersions.put(b, r.map(BucketRecord::version).orElse(null));
            int k = r.map(BucketRecord::slot).orElse(0);
            if (!s.slots.containsKey(k)) {
                readSlot(k).ifPresent(x -> s.slots.put(k, x));
            }
        }
        return s;
    }

    /**
     * Tries to claim bucket {@code b}, recovering a dead holder's writer first when needed.
     *
     * @param snap the snapshot taken before this process's latest fold
     */
    Claim claim(int b, Snapshot snap) {
        BucketRecord cur = readBucket(b).orElse(null);
        int prevSlot = 0;
        long prevInc = 0;
        boolean needsRecovery = true;
        if (cur != null && cur.released()) {
            if (cur.done() && !Objects.equals(cur.version(), snap.bucketVersions.get(b))) {
                return new Claim(Outcome.DONE_ELSEWHERE, false);
            }
            needsRecovery = false; // released after its holder flushed: everything is visible
        } else if (cur != null) {
            if (cur.slot() == slot && cur.incarnation() == incarnation) {
                return new Claim(Outcome.CLAIMED, false);
            }
            if (alive(cur.slot(), cur.incarnation())) {
                return new Claim(Outcome.HELD, false);
            }
            prevSlot = cur.slot();
            prevInc = cur.incarnation();
        }
        boolean recoveredBefore = !needsRecovery || snap.recovered(prevSlot, prevInc);
        if (needsRecovery && !ensureRecovered(prevSlot, prevInc)) {
            return new Claim(Outcome.HELD, false);
        }
        Optional<String> v = records.write(
                bucketName(b), cur == null ? null : cur.version(), bucketJson(slot, incarnation, false, false));
        if (v.isEmpty()) {
            return new Claim(Outcome.HELD, false);
        }
        boolean unchanged = Objects.equals(cur == null ? null : cur.version(), snap.bucketVersions.get(b));
        LOG.debug("slot {} claimed bucket {} (fold current: {})", slot, b, unchanged && recoveredBefore);
        return new Claim(Outcome.CLAIMED, unchanged && recoveredBefore);
    }

    /**
     * Makes sure slot {@code k}'s incarnation {@code i} (dead) was recovered: true when done (now or before), false
     * when someone else is doing it right now.
     */
    private boolean ensureRecovered(int k, long i) {
        SlotRecord rec = readSlot(k).orElse(null);
        if (rec != null && rec.incarnation() > i && rec.replayed()) {
            return true;
        }
        Optional<ExperimentLease> l = log.tryAcquireLease(leaseName(k), ttl, clock);
        if (l.isEmpty()) {
            return false; // a live process holds the slot and is opening (replaying) its writer
        }
        try {
            rec = readSlot(k).orElse(null);
            if (rec != null && rec.incarnation() > i && rec.replayed()) {
                return true;
            }
            long inc = (rec == null ? 0 : rec.incarnation()) + 1;
            Optional<String> v = records.write(
                    slotName(k),
                    rec == null ? null : rec.version(),
                    slotJson(holder + " (recovery)", inc, false, true));
            if (v.isEmpty()) {
                return false;
            }
            // Opening replays the dead incarnation's WAL into a generation every reader sees and raises the shard
            // epoch, fencing that incarnation should it still be alive; closing merges it.
            LogWriter w = log.openWriter(writerName(k), WriterOptions.DEFAULTS);
            w.close();
            records.write(slotName(k), v.get(), slotJson(holder + " (recovery)", inc, true, true));
            LOG.info(
                    "recovered writer {} (slot {} incarnation {}) of {}",
                    writerName(k),
                    k,
                    i,
                    log.location().uri());
            return true;
        } finally {
            l.get().release();
        }
    }

    /** Whether incarnation {@code i} of slot {@code k} is alive: the slot's current one, not left, lease held. */
    private boolean alive(int k, long i) {
        Optional<SlotRecord> rec = readSlot(k);
        return rec.isPresent()
                && rec.get().incarnation() == i
                && !rec.get().released()
                && log.leaseHeld(leaseName(k), clock);
    }

    /**
     * Releases {@code buckets} (held by this process); {@code done}: all their items finished. Call only after the
     * writer flushed everything it wrote for them.
     */
    void release(Collection<Integer> buckets, boolean done) {
        for (int b : buckets) {
            BucketRecord cur = readBucket(b).orElse(null);
            if (cur == null || cur.slot() != slot || cur.incarnation() != incarnation || cur.released()) {
                continue;
            }
            if (records.write(bucketName(b), cur.version(), bucketJson(slot, incarnation, true, done))
                    .isEmpty()) {
                LOG.warn("bucket {} changed while being released", b);
            }
        }
    }

    /** The slots as recorded, for status (slot -> record), with whether each one's lease is held now. */
    static Map<Integer, Map.Entry<SlotRecord, Boolean>> slots(CheckpointLog log) {
        Map<Integer, Map.Entry<SlotRecord, Boolean>> out = new java.util.TreeMap<>();
        try (ExperimentRecords r = log.records(DIR)) {
            for (int k = 0; k < MAX_SLOTS; k++) {
                Optional<SlotRecord> s = readSlot(r, k);
                if (s.isEmpty()) {
                    break; // slots are taken lowest first
                }
                out.put(k, Map.entry(s.get(), !s.get().released() && log.leaseHeld(leaseName(k))));
            }
        }
        return out;
    }

    /** Buckets per holding slot (live or not), for status. */
    static Map<Integer, List<Integer>> bucketsBySlot(CheckpointLog log) {
        Map<Integer, List<Integer>> out = new HashMap<>();
        try (ExperimentRecords r = log.records(DIR)) {
            for (int b = 0; b < BUCKETS; b++) {
                int bucket = b;
                readBucket(r, b)
                        .filter(x -> !x.released())
                        .ifPresent(x -> out.computeIfAbsent(x.slot(), k -> new ArrayList<>())
                                .add(bucket));
            }
        }
        return out;
    }

    private Optional<SlotRecord> readSlot(int k) {
        return readSlot(records, k);
    }

    private Optional<BucketRecord> readBucket(int b) {
        return readBucket(records, b);
    }

    private static Optional<SlotRecord> readSlot(ExperimentRecords r, int k) {
        return r.read(slotName(k)).map(v -> {
            JsonNode n = parse(v);
            return new SlotRecord(
                    n.path("holder").asText(),
                    n.path("incarnation").asLong(),
                    n.path("replayed").asBoolean(),
                    n.path("released").asBoolean(),
                    v.version());
        });
    }

    private static Optional<BucketRecord> readBucket(ExperimentRecords r, int b) {
        return r.read(bucketName(b)).map(v -> {
            JsonNode n = parse(v);
            return new BucketRecord(
                    n.path("slot").asInt(),
                    n.path("incarnation").asLong(),
                    n.path("released").asBoolean(),
                    n.path("done").asBoolean(),
                    v.version());
        });
    }

    private static JsonNode parse(ExperimentRecords.Versioned v) {
        try {
            JsonNode n = Json.parse(v.json());
            if (n != null && n.isObject()) {
                if (n.path("version").asInt(FORMAT_VERSION) > FORMAT_VERSION) {
                    throw new DamagedException(
                            "assignment record version " + n.path("version").asInt()
                                    + " is newer than this Vigilo reads (" + FORMAT_VERSION + "); upgrade Vigilo");
                }
                return n;
            }
        } catch (JsonProcessingException e) {
            // reported below
        }
        throw new DamagedException("assignment record is not a JSON object: " + v.json());
    }

    private static String slotJson(String holder, long inc, boolean replayed, boolean released) {
        ObjectNode o = Json.MAPPER
                .createObjectNode()
                .put("version", FORMAT_VERSION)
                .put("holder", holder)
                .put("incarnation", inc)
                .put("replayed", replayed)
                .put("released", released);
        return Json.canonical(o);
    }

    private static String bucketJson(int slot, long inc, boolean released, boolean done) {
        return Json.canonical(Json.MAPPER
                .createObjectNode()
                .put("version", FORMAT_VERSION)
                .put("slot", slot)
                .put("incarnation", inc)
                .put("released", released)
                .put("done", done));
    }

    private static String slotName(int k) {
        return "slot-" + k;
    }

    private static String bucketName(int b) {
        return "bucket-" + b;
    }

    private static String leaseName(int k) {
        return DIR + "/slot-" + k;
    }

    private static String holderId() {
        String host;
        try {
            host = java.net.InetAddress.getLocalHost().getHostName();
        } catch (java.io.IOException e) {
            host = "unknown-host";
        }
        return host + "/" + ProcessHandle.current().pid() + "/" + UUID.randomUUID();
    }

    /**
     * Leaves the experiment: the slot record says {@code released} and the lease is given up. Buckets still held
     * stay held by this (now dead) incarnation: another process recovers our writer before it claims them.
     */
    @Override
    public void close() {
        if (heartbeat != null) {
            try {
                heartbeat.close();
            } catch (Exception e) {
                LOG.warn("stopping the heartbeat of slot {} failed: {}", slot, e.getMessage());
            }
        }
        try {
            if (slot >= 0 && slotVersion != null) {
                SlotRecord cur = readSlot(slot).orElse(null);
                if (cur != null
                        && cur.incarnation() == incarnation
                        && cur.version().equals(slotVersion)) {
                    records.write(slotName(slot), slotVersion, slotJson(holder, incarnation, cur.replayed(), true));
                }
            }
        } catch (VigiloException e) {
            LOG.warn("leaving slot {} failed (it is taken over once its lease is free): {}", slot, e.getMessage());
        } finally {
            synchronized (this) {
                if (lease != null) {
                    lease.release();
                }
                lease = null;
            }
            records.close();
        }
    }
}
