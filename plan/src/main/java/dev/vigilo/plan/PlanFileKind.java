package dev.vigilo.plan;

/**
 * The kind of a plan file ({@code run_plan_objects.kind}), one per plan format (docs/formats/plan-layout.md). The
 * spelling is what the {@code run_plan_objects.kind} check constraint admits.
 */
enum PlanFileKind {
    /** A chunk file (docs/formats/plan-chunk.md); the only kind with a chunk index. */
    CHUNK("chunk"),
    /** A chunk index document (docs/formats/plan-index.md). */
    INDEX("index"),
    /** A gate count file (docs/formats/plan-gates.md). */
    GATE("gate"),
    /** The run configuration (docs/formats/plan-configuration.md). */
    CONFIGURATION("configuration"),
    /** The run-plan manifest, the plan's root (docs/formats/plan-manifest.md). */
    MANIFEST("manifest");

    private final String spelling;

    PlanFileKind(String spelling) {
        this.spelling = spelling;
    }

    /** The spelling in SQL. */
    String spelling() {
        return spelling;
    }

    @Override
    public String toString() {
        return spelling;
    }
}
