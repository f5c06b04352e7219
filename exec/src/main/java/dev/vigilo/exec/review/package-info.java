/**
 * Human review (docs/execution.md, "Human review"): a reviewer's override of a case's outcome, recorded as an
 * auditable, append-only record, and the gate table recomputed beside the machine one. The module's API: {@link
 * dev.vigilo.exec.review.RunReviews}. Uses {@code record} and the root package.
 */
package dev.vigilo.exec.review;
