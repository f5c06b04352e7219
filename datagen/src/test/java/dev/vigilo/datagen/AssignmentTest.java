package dev.vigilo.datagen;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigilo.checkpoint.CheckpointBatch;
import dev.vigilo.checkpoint.CheckpointLog;
import dev.vigilo.checkpoint.FieldValue;
import dev.vigilo.checkpoint.ItemRef;
import dev.vigilo.checkpoint.ItemSeq;
import dev.vigilo.checkpoint.LogLocation;
import dev.vigilo.checkpoint.LogReader;
import dev.vigilo.checkpoint.LogWriter;
import dev.vigilo.checkpoint.StepRef;
import dev.vigilo.checkpoint.WriterOptions;
import dev.vigilo.common.errors.FencedException;
import dev.vigilo.common.time.MovableClock;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The bucket assignment on a real log: slots, claims, and the takeover of a bucket whose holder left without
 * releasing it, which recovers (replays and fences) the holder's writer first, so its acknowledged but unflushed
 * batch becomes visible and its later writes are refused.
 */
class AssignmentTest {
    @TempDir
    Path dir;

    @Test
    void aTakeoverRecoversAndFencesThePreviousHoldersWriter() {
        LogLocation loc = new LogLocation(dir, "pipe", "exp");
        try (CheckpointLog log = CheckpointLog.openOrCreate(loc)) {
            Assignment a = Assignment.join(log, Duration.ofSeconds(30));
            Assignment b = Assignment.join(log, Duration.ofSeconds(30));
            assertThat(List.of(a.writerName(), b.writerName())).containsExactly("runner", "runner-1");
            LogWriter wa = log.openWriter(a.writerName(), WriterOptions.DEFAULTS);
            a.writerReplayed();
            LogWriter wb = log.openWriter(b.writerName(), WriterOptions.DEFAULTS);
            b.writerReplayed();
            try {
                String item = "item-x";
                int bucket = Assignment.bucketOf(item);
                Assignment.Snapshot sa = a.snapshot();
                assertThat(a.claim(bucket, sa)).isEqualTo(new Assignment.Claim(Assignment.Outcome.CLAIMED, true));
                Assignment.Snapshot sb = b.snapshot();
                assertThat(b.claim(bucket, sb).outcome()).isEqualTo(Assignment.Outcome.HELD);

                // A writes a batch (durable in its WAL, not flushed: no other reader sees it yet), then leaves
                // without releasing its bucket, as a process that dies would.
                CheckpointBatch.Builder bb = CheckpointBatch.builder("run-a", wa.epoch(), StepRef.NONE);
                bb.item(ItemRef.root(item), ItemSeq.FIRST).created(null).set("n", new FieldValue.IntValue(1));
                wa.write(bb.build());
                try (LogReader r = log.reader()) {
                    assertThat(r.fold(item)).isEmpty();
                }
                a.close();

                // B takes the bucket over: A's writer is recovered first, so the fold B must now make sees A's
                // batch, and A can write nothing more.
                Assignment.Claim c = b.claim(bucket, sb);
                assertThat(c).isEqualTo(new Assignment.Claim(Assignment.Outcome.CLAIMED, false));
                try (LogReader r = log.reader()) {
                    assertThat(r.fold(item)).isPresent();
                }
                CheckpointBatch.Builder late = CheckpointBatch.builder("run-a", wa.epoch(), StepRef.NONE);
                late.item(ItemRef.root("item-y"), ItemSeq.FIRST).created(null);
                assertThatThrownBy(() -> wa.write(late.build())).isInstanceOf(FencedException.class);

                // Released with done after B's flush: a process whose fold predates that knows the bucket is done.
                wb.flush();
                b.release(List.of(bucket), true);
                Assignment c2 = Assignment.join(log, Duration.ofSeconds(30));
                assertThat(c2.writerName()).isEqualTo("runner");
                assertThat(c2.claim(bucket, sb).outcome()).isEqualTo(Assignment.Outcome.DONE_ELSEWHERE);
                c2.close();
            } finally {
                wb.close();
                b.close();
                try {
                    wa.close();
                } catch (RuntimeException fenced) {
                    // A's writer was fenced; closing it may complain.
                }
            }
            assertThat(Assignment.slots(log)).hasSize(2);
        }
    }

    /** A heartbeat that beats when the test says, and records its period and whether it was stopped. */
    static final class ManualHeartbeat implements Assignment.Heartbeat {
        Duration every;
        Runnable beat;
        boolean stopped;

        @Override
        public AutoCloseable start(Duration period, Runnable renew) {
            assertThat(beat).as("one heartbeat per process").isNull();
            every = period;
            beat = renew;
            return () -> stopped = true;
        }
    }

    @Test
    void theSlotLeaseIsRenewedAThirdOfItsTermApartUntilTheProcessLeaves() {
        LogLocation loc = new LogLocation(dir, "pipe", "beats");
        try (CheckpointLog log = CheckpointLog.openOrCreate(loc)) {
            ManualHeartbeat beats = new ManualHeartbeat();
            Assignment a = Assignment.join(log, Duration.ofSeconds(30), new MovableClock(0), beats);
            assertThat(beats.every).isEqualTo(Duration.ofSeconds(10));
            beats.beat.run(); // a renewal of a lease still held keeps it
            assertThat(a.leaseLost()).isFalse();
            assertThat(Assignment.slots(log).get(0).getValue())
                    .as("slot 0 held")
                    .isTrue();
            assertThat(beats.stopped).isFalse();
            a.close();
            assertThat(beats.stopped).as("leaving stops the heartbeat").isTrue();
            assertThat(Assignment.slots(log).get(0).getValue())
                    .as("slot 0 held")
                    .isFalse();
        }
    }
}
