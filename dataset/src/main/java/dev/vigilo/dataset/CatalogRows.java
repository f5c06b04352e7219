package dev.vigilo.dataset;

import dev.vigilo.storage.ObjectKey;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.Sha256;
import dev.vigilo.storage.StoreBinding;
import java.sql.Timestamp;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Supplier;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.mapper.RowMapper;

/** SQL access to {@code dataset_uploads}: one insert per finalized upload, reads, never an update. */
final class CatalogRows {
    private static final String COLUMNS = "upload_id, name, source_sha256, source_bytes, membership_uuid, case_count, "
            + "index_root_key, index_root_length, index_root_sha256, index_levels, storage_binding, created_at";

    private static final RowMapper<DatasetEntry> MAPPER = (rs, ctx) -> new DatasetEntry(
            rs.getObject("upload_id", UUID.class),
            rs.getString("name"),
            Sha256.parseHex(rs.getString("source_sha256")),
            rs.getLong("source_bytes"),
            rs.getObject("membership_uuid", UUID.class),
            rs.getLong("case_count"),
            new ObjectRef(
                    ObjectKey.of(rs.getString("index_root_key")),
                    rs.getLong("index_root_length"),
                    Sha256.parseHex(rs.getString("index_root_sha256"))),
            rs.getInt("index_levels"),
            new StoreBinding(rs.getString("storage_binding")),
            rs.getTimestamp("created_at").toInstant());

    private final Supplier<Jdbi> database;

    /** @param database the control database, asked for on each use (so it may still be opening when this is made) */
    CatalogRows(Supplier<Jdbi> database) {
        this.database = Objects.requireNonNull(database, "database");
    }

    /**
     * Inserts the entry unless its upload id exists.
     *
     * @return true when this call inserted it
     */
    boolean insert(DatasetEntry e, int formatVersion, Optional<DatasetOrigin> origin) {
        return database.get().inTransaction(h -> {
            boolean inserted = insertEntry(h, e, formatVersion);
            if (inserted && origin.isPresent()) {
                DatasetOrigin o = origin.get();
                h.createUpdate("INSERT INTO dataset_origins (upload_id, kind, durable_root, pipeline, experiment,"
                                + " log_version, items, case_map) VALUES (:id, 'datagen', :root, :pipeline,"
                                + " :experiment, :version, :items, :map)")
                        .bind("id", e.uploadId())
                        .bind("root", o.durableRoot())
                        .bind("pipeline", o.pipeline())
                        .bind("experiment", o.experiment())
                        .bind("version", o.logVersion())
                        .bind("items", o.items())
                        .bind("map", o.map().toString())
                        .execute();
            }
            return inserted;
        });
    }

    /** Where the entry came from, when Vigilo made it. */
    Optional<DatasetOrigin> origin(UUID uploadId) {
        return database.get()
                .withHandle(h -> h.createQuery("SELECT durable_root, pipeline, experiment, log_version, items,"
                                + " case_map FROM dataset_origins WHERE upload_id = :id")
                        .bind("id", uploadId)
                        .map((rs, ctx) -> new DatasetOrigin(
                                rs.getString("durable_root"),
                                rs.getString("pipeline"),
                                rs.getString("experiment"),
                                rs.getLong("log_version"),
                                rs.getLong("items"),
                                CaseMap.parse(rs.getString("case_map"), "dataset_origins.case_map")))
                        .findOne());
    }

    /** The entries made from one experiment, newest first. */
    List<DatasetEntry> madeFrom(String pipeline, String experiment) {
        return database.get()
                .withHandle(h -> h.createQuery("SELECT " + prefixed("u.") + " FROM dataset_uploads u"
                                + " JOIN dataset_origins o ON o.upload_id = u.upload_id"
                                + " WHERE o.pipeline = :pipeline AND o.experiment = :experiment"
                                + " ORDER BY u.created_at DESC, u.upload_id")
                        .bind("pipeline", pipeline)
                        .bind("experiment", experiment)
                        .map(MAPPER)
                        .list());
    }

    private static String prefixed(String alias) {
        StringBuilder b = new StringBuilder();
        for (String c : COLUMNS.split(", ")) {
            b.append(b.length() == 0 ? "" : ", ").append(alias).append(c);
        }
        return b.toString();
    }

    private static boolean insertEntry(org.jdbi.v3.core.Handle handle, DatasetEntry e, int formatVersion) {
        return handle.createUpdate("INSERT INTO dataset_uploads (" + COLUMNS + ", format_version) "
                                + "VALUES (:id, :name, :src, :srcBytes, :membership, :count, :rootKey, :rootLen, :rootSha, "
                                + ":levels, :binding, :created, :version) ON CONFLICT (upload_id) DO NOTHING")
                        .bind("id", e.uploadId())
                        .bind("name", e.name())
                        .bind("src", e.sourceSha256().toHex())
                        .bind("srcBytes", e.sourceBytes())
                        .bind("membership", e.membershipUuid())
                        .bind("count", e.caseCount())
                        .bind("rootKey", e.indexRoot().key().value())
                        .bind("rootLen", e.indexRoot().length())
                        .bind("rootSha", e.indexRoot().sha256().toHex())
                        .bind("levels", e.indexLevels())
                        .bind("binding", e.storage().value())
                        .bind("created", Timestamp.from(e.createdAt()))
                        .bind("version", formatVersion)
                        .execute()
                == 1;
    }

    Optional<DatasetEntry> find(UUID uploadId) {
        return database.get()
                .withHandle(h -> h.createQuery("SELECT " + COLUMNS + " FROM dataset_uploads WHERE upload_id = :id")
                        .bind("id", uploadId)
                        .map(MAPPER)
                        .findOne());
    }

    List<DatasetEntry> list() {
        return database.get()
                .withHandle(h -> h.createQuery(
                                "SELECT " + COLUMNS + " FROM dataset_uploads " + "ORDER BY created_at DESC, upload_id")
                        .map(MAPPER)
                        .list());
    }

    /** Entries after {@code after} in list order (newest first, then by upload id), at most {@code limit}. */
    List<DatasetEntry> page(Optional<DatasetEntry> after, int limit) {
        return database.get()
                .withHandle(h -> h.createQuery("SELECT " + COLUMNS + " FROM dataset_uploads"
                                + (after.isPresent()
                                        ? " WHERE created_at < :at OR (created_at = :at AND upload_id > :id)"
                                        : "")
                                + " ORDER BY created_at DESC, upload_id LIMIT :n")
                        .bind(
                                "at",
                                after.map(e -> Timestamp.from(e.createdAt())).orElse(null))
                        .bind("id", after.map(DatasetEntry::uploadId).orElse(null))
                        .bind("n", limit)
                        .map(MAPPER)
                        .list());
    }
}
