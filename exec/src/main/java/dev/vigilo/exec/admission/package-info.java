/**
 * Admission (docs/execution.md, "Admission (exact bounds)"): seeding a published run into its execution databases under the
 * creation lease, resumable page by page. The module's API: {@link dev.vigilo.exec.admission.Admission} (its
 * {@code Hooks} are a seam for exec's crash tests only). Uses {@code record} and the root package.
 */
package dev.vigilo.exec.admission;
