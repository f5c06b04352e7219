package dev.vigilo.exec.worker;

import dev.vigilo.plan.PlanShape;
import dev.vigilo.storage.Sha256;
import java.util.List;
import java.util.Objects;
import java.util.UUID;

/**
 * A claimed chunk as its immutable chunk file lists it (docs/formats/plan-chunk.md): which cases it holds, in
 * ordinal order, and its membership digest, the case fold over those cases.
 *
 * @param chunkIndex the chunk's index in the plan
 * @param chunkId    the chunk's id
 * @param cases      1..{@link #PlanShape.CHUNK_CASES} cases with consecutive ordinals
 * @param membership the chunk file's {@code membership_sha256}
 */
record ChunkMembership(long chunkIndex, UUID chunkId, List<Case> cases, Sha256 membership) {
    ChunkMembership {
        Objects.requireNonNull(chunkId, "chunkId");
        Objects.requireNonNull(membership, "membership");
        cases = List.copyOf(cases);
        if (cases.isEmpty() || cases.size() > PlanShape.CHUNK_CASES) {
            throw new IllegalArgumentException(
                    "a chunk holds 1.." + PlanShape.CHUNK_CASES + " cases, got " + cases.size());
        }
        for (int i = 1; i < cases.size(); i++) {
            if (cases.get(i).ordinal() != cases.get(0).ordinal() + i) {
                throw new IllegalArgumentException("chunk case ordinals are not consecutive at position " + i);
            }
        }
    }

    /**
     * One case the chunk lists: what the dataset must hold at its ordinal.
     *
     * @param ordinal the case's ordinal in the dataset
     * @param id      the case id
     * @param sha256  the dataset's record hash of the case (SHA-256 of the submitted line)
     */
    record Case(long ordinal, String id, Sha256 sha256) {
        Case {
            Objects.requireNonNull(id, "id");
            Objects.requireNonNull(sha256, "sha256");
            if (ordinal < 0) {
                throw new IllegalArgumentException("case ordinal must be >= 0, got " + ordinal);
            }
        }
    }

    long firstOrdinal() {
        return cases.get(0).ordinal();
    }

    int size() {
        return cases.size();
    }

    /** How messages name the chunk. */
    String describe() {
        return "chunk " + chunkIndex + " (" + chunkId + ")";
    }
}
