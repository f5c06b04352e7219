/**
 * Run preparation: a finalized dataset and a profile become an immutable, verified execution plan
 * (docs/run-preparation.md, formats in docs/formats/plan-*.md).
 *
 * <p>Public API: {@link dev.vigilo.plan.RunPreparation} ({@code run create}), {@link dev.vigilo.plan.RunStatusReader}
 * ({@code run status}/{@code watch}), the request/result records, the state enums {@link dev.vigilo.plan.RunState}
 * and {@link dev.vigilo.plan.PlanStatus}, {@link dev.vigilo.plan.CreationLease}, {@link dev.vigilo.plan.ProfileParser}
 * and {@link dev.vigilo.plan.Profile}, {@link dev.vigilo.plan.Selection} and {@link dev.vigilo.plan.ProfileException},
 * and for execution {@link dev.vigilo.plan.PublishedPlan} and {@link dev.vigilo.plan.AdmissionLease}; failures are the
 * shared kinds of {@code dev.vigilo.common.errors}, each message naming the run. Everything else is package-private:
 * the planner, the group writer, the lease ({@code Authority}), the
 * publication verifier and one parser class per plan file format.
 *
 * <p>Commit protocol: plan files are staged (ownership rows, then create-only PUTs, each read back and verified,
 * then acknowledgement), and a single SQL transaction that rechecks the creation lease records the verified manifest
 * reference; that transaction is the only commit point.
 */
package dev.vigilo.plan;
