-- What a run is, for people (docs/web.md, "Runs with an identity"): the profile's name and its agent's kind and model
-- (an http agent's model; a command agent's program), recorded at the run's first claim beside its frozen inputs.
-- They are functions of the profile, so its hash (profile_sha256) already freezes them. NULL for runs created before.
ALTER TABLE run_plans ADD COLUMN profile_name text;
ALTER TABLE run_plans ADD COLUMN agent_kind text;
ALTER TABLE run_plans ADD COLUMN agent_model text;
