-- Run groups (docs/run-preparation.md, "Run groups"): `vigilo run create --agents agents.yaml` makes one run per agent
-- definition, same dataset, evaluators and gates, under one group name. The group and its members (agent name, order,
-- and the run id each will have) are recorded in one transaction before any run is created; the runs themselves are
-- created afterwards by the ordinary run creation (RunPreparation, Admission), each resumable by its run id. A group
-- whose completed_at is NULL was interrupted: repeating the same command creates or resumes its missing runs and then
-- sets completed_at. profiles_sha256 freezes what the group was made from (the members' canonical profiles, in order),
-- so a repeat with other agents or another profile under the same name is refused.
CREATE TABLE run_groups (
    group_id          uuid        PRIMARY KEY,
    name              text        NOT NULL UNIQUE,
    dataset_upload_id uuid        NOT NULL REFERENCES dataset_uploads (upload_id),
    profiles_sha256   text        NOT NULL CHECK (profiles_sha256 ~ '^[0-9a-f]{64}$'),
    created_at        timestamptz NOT NULL DEFAULT now(),
    completed_at      timestamptz
);

-- One row per member, in the agents file's order. run_id is fixed when the group is recorded (derived from the group
-- id and the agent name), so a repeat creates exactly the runs the first attempt meant to; no foreign key to runs,
-- since a member's run may not exist yet.
CREATE TABLE run_group_members (
    group_id   uuid    NOT NULL REFERENCES run_groups (group_id),
    position   integer NOT NULL CHECK (position >= 0),
    agent_name text    NOT NULL,
    run_id     uuid    NOT NULL UNIQUE,
    PRIMARY KEY (group_id, position),
    UNIQUE (group_id, agent_name)
);
