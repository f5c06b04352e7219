/**
 * Run preparation: a finalized dataset and a profile become an immutable, verified execution plan
 * (docs/run-preparation.md, formats in docs/formats/plan-*.md).
 *
 * <p>Public API: {@link dev.vigilo.plan.RunPreparation} ({@code run create}), {@link dev.vigilo.plan.RunStatusReader}
 * ({@code run status}/{@code watch}), the request/result records, the state enums {@link dev.vigilo.plan.RunState}
 * and {@link dev.vigilo.plan.PlanStatus}, {@link dev.vigilo.plan.CreationLease}, {@link dev.vigilo.plan.ProfileParser}
 * and {@link dev.vigilo.plan.Profile}, {@link dev.vigilo.plan.Selection} and {@link dev.vigilo.plan.ProfileException},
 * and for execution {@link dev.vigilo.plan.PublishedPlan}, {@link dev.vigilo.plan.AdmissionLease} and the run state
 * machine {@link dev.vigilo.plan.RunLifecycle} (with {@link dev.vigilo.plan.RunVerdict}); failures are the shared kinds
 * of {@code dev.vigilo.common.errors}, each message naming the run. Everything else is package-private: the planner,
 * the group writer, the creator's {@code Authority} and its parts (the creation lease {@code LeaseAuthority}, shared
 * with admission; {@code FrozenInputs}; {@code PlanFiles}; the publication commit {@code PlanPublication}), the
 * publication verifier and one parser class per plan file format.
 *
 * <p>Commit protocol: plan files are staged (ownership rows, then create-only PUTs, each read back and verified,
 * then acknowledgement), and a single SQL transaction that rechecks the creation lease records the verified manifest
 * reference; that transaction is the only commit point ({@code PlanPublication.commit} states its contract).
 */
package dev.vigilo.plan;
