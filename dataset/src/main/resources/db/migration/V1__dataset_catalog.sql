-- Finalized dataset catalog (docs/formats/dataset.md). A row is inserted once, after every file of the upload is
-- stored and verified, and never updated: its presence is the commit point of an upload.
CREATE TABLE dataset_uploads (
    upload_id          uuid        PRIMARY KEY,
    name               text        NOT NULL CHECK (length(name) BETWEEN 1 AND 256),
    source_sha256      text        NOT NULL CHECK (source_sha256 ~ '^[0-9a-f]{64}$'),
    source_bytes       bigint      NOT NULL CHECK (source_bytes > 0),
    membership_uuid    uuid        NOT NULL,
    case_count         bigint      NOT NULL CHECK (case_count > 0),
    index_root_key     text        NOT NULL,
    index_root_length  bigint      NOT NULL CHECK (index_root_length > 0),
    index_root_sha256  text        NOT NULL CHECK (index_root_sha256 ~ '^[0-9a-f]{64}$'),
    index_levels       integer     NOT NULL CHECK (index_levels BETWEEN 1 AND 8),
    storage_binding    text        NOT NULL,
    format_version     integer     NOT NULL,
    created_at         timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX dataset_uploads_created_at ON dataset_uploads (created_at DESC, upload_id);
CREATE INDEX dataset_uploads_name ON dataset_uploads (name);
