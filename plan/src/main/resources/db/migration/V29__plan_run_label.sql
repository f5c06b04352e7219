-- A run's optional label (`vigilo run create --label`), shown after its profile's name wherever the run is named
-- (docs/run-preparation.md, "Control records"; docs/web.md). Recorded with the plan row at the run's first claim;
-- NULL when none was given (and for every run created before this migration).
ALTER TABLE run_plans ADD COLUMN run_label text;
