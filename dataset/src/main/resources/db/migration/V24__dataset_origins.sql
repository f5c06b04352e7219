-- Where a dataset came from when Vigilo made it (docs/formats/dataset.md, "Origins"): today only a datagen
-- experiment's export. Inserted in the transaction that inserts the catalog row, never updated; a dataset uploaded
-- from a file has no row here.
CREATE TABLE dataset_origins (
    upload_id    uuid        PRIMARY KEY REFERENCES dataset_uploads (upload_id),
    kind         text        NOT NULL CHECK (kind IN ('datagen')),
    durable_root text        NOT NULL,
    pipeline     text        NOT NULL,
    experiment   text        NOT NULL,
    log_version  bigint      NOT NULL CHECK (log_version >= 0),
    items        bigint      NOT NULL CHECK (items > 0),
    case_map     text        NOT NULL
);

CREATE INDEX dataset_origins_experiment ON dataset_origins (pipeline, experiment);
