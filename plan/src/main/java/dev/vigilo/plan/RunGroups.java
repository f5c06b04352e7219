package dev.vigilo.plan;

import dev.vigilo.common.errors.ConflictException;
import dev.vigilo.common.errors.NotFoundException;
import dev.vigilo.common.input.Names;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.regex.Pattern;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;

/**
 * Run groups in the control database ({@code run_groups}, {@code run_group_members}, control migration V26;
 * docs/run-preparation.md, "Run groups"): a name, the dataset, what the members were made from, and per member its
 * agent name, order and run id. These records never hold a run's state: the runs themselves are created by
 * {@link RunPreparation} and their lifecycle stays {@link RunLifecycle}'s. Thread-safe.
 */
public final class RunGroups {
    /** The most groups {@link #list} returns. */
    public static final int MAX_LIST = 200;

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}");

    private final Jdbi jdbi;

    public RunGroups(Jdbi jdbi) {
        this.jdbi = Objects.requireNonNull(jdbi, "jdbi");
    }

    /**
     * A member of a group.
     *
     * @param position  its place in the agents file, from 0
     * @param agentName its agent definition's name
     * @param runId     the id its run has (or will have, while the group is incomplete)
     */
    public record Member(int position, String agentName, UUID runId) {
        public Member {
            Objects.requireNonNull(agentName, "agentName");
            Objects.requireNonNull(runId, "runId");
        }
    }

    /**
     * A group.
     *
     * @param completedAt when every member's run was created; empty while an interrupted creation left some to do
     */
    public record Group(
            UUID groupId,
            String name,
            UUID datasetUploadId,
            String profilesSha256,
            Instant createdAt,
            Optional<Instant> completedAt,
            List<Member> members) {
        public Group {
            Objects.requireNonNull(groupId, "groupId");
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(completedAt, "completedAt");
            members = List.copyOf(members);
        }
    }

    /** A run's group, for lists: the group's id and name and the run's agent name in it. */
    public record Membership(UUID groupId, String groupName, String agentName) {}

    /** Checks a group name: 1..128 letters, digits, '_', '.', ':' or '-', starting with a letter or digit. */
    public static String checkName(String name) {
        if (name == null || !NAME.matcher(name).matches()) {
            throw new dev.vigilo.common.errors.InvalidInputException(
                    "group name "
                            + Names.quote(name == null ? "" : name)
                            + " is not valid; use 1..128 letters, digits, '_', '.', ':' or '-', starting with a letter or digit");
        }
        return name;
    }

    /** The run id a member gets: a name-based UUID of the group id and the agent name, the same on every repeat. */
    static UUID memberRunId(UUID groupId, String agentName) {
        return UUID.nameUUIDFromBytes(
                ("vigilo-run-group/" + groupId + "/" + agentName).getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Records the group and its members in one transaction, or returns the group already recorded under {@code name}
     * when it was made from the same dataset and the same members (a repeated command resumes it).
     *
     * @throws ConflictException a group of that name exists with another dataset or other members
     */
    public Group record(String name, UUID datasetUploadId, String profilesSha256, List<String> agentNames) {
        checkName(name);
        Objects.requireNonNull(datasetUploadId, "datasetUploadId");
        return jdbi.inTransaction(h -> {
            // A lock on the name's row (or, for a new name, the insert's uniqueness) serialises two creators.
            Optional<Group> existing = find(h, name, true);
            if (existing.isPresent()) {
                Group g = existing.get();
                List<String> had = g.members().stream().map(Member::agentName).toList();
                if (!g.datasetUploadId().equals(datasetUploadId)
                        || !g.profilesSha256().equals(profilesSha256)
                        || !had.equals(agentNames)) {
                    throw new ConflictException("group " + Names.quote(name) + " already exists (" + g.groupId()
                            + ") with another dataset, profile or agents; choose another --group, or repeat the"
                            + " command that created it");
                }
                return g;
            }
            UUID id = UUID.randomUUID();
            int inserted = h.createUpdate("INSERT INTO run_groups (group_id, name, dataset_upload_id, profiles_sha256)"
                            + " VALUES (:g, :n, :d, :s) ON CONFLICT (name) DO NOTHING")
                    .bind("g", id)
                    .bind("n", name)
                    .bind("d", datasetUploadId)
                    .bind("s", profilesSha256)
                    .execute();
            if (inserted == 0) {
                throw new ConflictException("group " + Names.quote(name) + " was created by another command just now;"
                        + " repeat this one to resume it, or choose another --group");
            }
            for (int i = 0; i < agentNames.size(); i++) {
                h.createUpdate("INSERT INTO run_group_members (group_id, position, agent_name, run_id)"
                                + " VALUES (:g, :p, :a, :r)")
                        .bind("g", id)
                        .bind("p", i)
                        .bind("a", agentNames.get(i))
                        .bind("r", memberRunId(id, agentNames.get(i)))
                        .execute();
            }
            return find(h, name, false).orElseThrow();
        });
    }

    /** Marks the group complete: every member's run exists (idempotent). */
    public void complete(UUID groupId) {
        jdbi.useHandle(h -> h.createUpdate(
                        "UPDATE run_groups SET completed_at = now() WHERE group_id = :g AND completed_at IS NULL")
                .bind("g", groupId)
                .execute());
    }

    /**
     * The group named {@code nameOrId}, or whose id it is.
     *
     * @throws NotFoundException no such group
     */
    public Group get(String nameOrId) {
        Objects.requireNonNull(nameOrId, "nameOrId");
        if (!NAME.matcher(nameOrId).matches()) {
            // Neither a name nor an id (ids match the name pattern too): nothing to look up.
            throw new NotFoundException(
                    "no run group " + Names.quote(nameOrId) + "; see `vigilo run groups` for the groups");
        }
        return jdbi.withHandle(h -> {
            Optional<Group> byId = Optional.empty();
            try {
                UUID id = UUID.fromString(nameOrId);
                if (id.toString().equals(nameOrId)) {
                    byId = findById(h, id);
                }
            } catch (IllegalArgumentException e) {
                // not an id: a name
            }
            return byId.or(() -> find(h, nameOrId, false))
                    .orElseThrow(() -> new NotFoundException(
                            "no run group " + Names.quote(nameOrId) + "; see `vigilo run groups` for the groups"));
        });
    }

    /** Whether {@code nameOrId} names a group (by name or id). */
    public boolean exists(String nameOrId) {
        try {
            get(nameOrId);
            return true;
        } catch (NotFoundException e) {
            return false;
        }
    }

    /** The newest groups first, at most {@code limit} (1..{@link #MAX_LIST}). */
    public List<Group> list(int limit) {
        int n = Math.max(1, Math.min(MAX_LIST, limit));
        return jdbi.withHandle(h -> {
            List<UUID> ids = h.createQuery(
                            "SELECT group_id FROM run_groups ORDER BY created_at DESC, group_id LIMIT :n")
                    .bind("n", n)
                    .mapTo(UUID.class)
                    .list();
            List<Group> out = new ArrayList<>();
            for (UUID id : ids) {
                findById(h, id).ifPresent(out::add);
            }
            return out;
        });
    }

    /** The group of each of {@code runIds} that belongs to one (one query). */
    public Map<UUID, Membership> membershipOf(Collection<UUID> runIds) {
        Map<UUID, Membership> out = new HashMap<>();
        if (runIds.isEmpty()) {
            return out;
        }
        jdbi.useHandle(h -> h.createQuery("SELECT m.run_id, m.agent_name, g.group_id, g.name FROM run_group_members m"
                        + " JOIN run_groups g USING (group_id) WHERE m.run_id = ANY(:r)")
                .bindArray("r", UUID.class, runIds.toArray(new UUID[0]))
                .mapToMap()
                .forEach(m -> out.put(
                        (UUID) m.get("run_id"),
                        new Membership(
                                (UUID) m.get("group_id"), (String) m.get("name"), (String) m.get("agent_name")))));
        return out;
    }

    private static Optional<Group> find(Handle h, String name, boolean lock) {
        return h.createQuery("SELECT group_id FROM run_groups WHERE name = :n" + (lock ? " FOR UPDATE" : ""))
                .bind("n", name)
                .mapTo(UUID.class)
                .findOne()
                .flatMap(id -> findById(h, id));
    }

    private static Optional<Group> findById(Handle h, UUID id) {
        Optional<Map<String, Object>> row = h.createQuery("SELECT group_id, name, dataset_upload_id, profiles_sha256,"
                        + " created_at, completed_at FROM run_groups WHERE group_id = :g")
                .bind("g", id)
                .mapToMap()
                .findOne();
        if (row.isEmpty()) {
            return Optional.empty();
        }
        Map<String, Object> m = row.get();
        List<Member> members = h.createQuery(
                        "SELECT position, agent_name, run_id FROM run_group_members WHERE group_id = :g ORDER BY position")
                .bind("g", id)
                .map((rs, ctx) ->
                        new Member(rs.getInt("position"), rs.getString("agent_name"), (UUID) rs.getObject("run_id")))
                .list();
        return Optional.of(new Group(
                id,
                (String) m.get("name"),
                (UUID) m.get("dataset_upload_id"),
                (String) m.get("profiles_sha256"),
                instant(m.get("created_at")),
                Optional.ofNullable(m.get("completed_at")).map(RunGroups::instant),
                members));
    }

    private static Instant instant(Object o) {
        if (o instanceof OffsetDateTime t) {
            return t.toInstant();
        }
        if (o instanceof java.sql.Timestamp t) {
            return t.toInstant();
        }
        throw new IllegalStateException("unexpected timestamp type " + o.getClass());
    }
}
