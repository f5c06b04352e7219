-- Pause --now (docs/execution.md, "Pause and resume"): a pause that interrupts the chunks workers hold of the run
-- and has them given back (no attempt used, nothing of them committed), asked for with `vigilo run pause --now` or
-- taken by a run whose budget cannot cover its next model call. True only while paused (every transition that leaves
-- paused clears it with the other pause fields). Written only by dev.vigilo.plan.RunLifecycle.
ALTER TABLE runs ADD COLUMN pause_interrupts boolean NOT NULL DEFAULT false;
ALTER TABLE runs ADD CONSTRAINT runs_pause_interrupts_paused CHECK (NOT pause_interrupts OR status = 'paused');
