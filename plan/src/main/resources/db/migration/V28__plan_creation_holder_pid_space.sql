-- The pid space of a run's creation-lease holder (docs/run-preparation.md, "Authority and recovery"): the
-- LocalHost.processNamespace() of the claiming process, <boot id>/<pid namespace>. A claimant judges the holder's pid
-- from its own process table only when this equals its own: two containers may share a host name (host networking)
-- while each has its own pids, and a machine keeps its name across reboots while its pids start over. NULL (a claim
-- recorded before this migration, or a platform that does not say): the holder is not judged, its lease is waited out.
ALTER TABLE runs ADD COLUMN creation_holder_pid_space text;
