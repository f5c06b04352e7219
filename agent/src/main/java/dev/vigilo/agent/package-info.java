/**
 * Running the agent under evaluation on one case (a local command, or an OpenAI-compatible chat completions
 * endpoint) and the profile's evaluators on its output. Knows nothing of plans, chunks or databases: it consumes the
 * frozen agent settings and evaluator plan of a run's configuration (docs/formats/plan-configuration.md).
 */
package dev.vigilo.agent;
