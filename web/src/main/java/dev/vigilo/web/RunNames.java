package dev.vigilo.web;

import dev.vigilo.common.errors.NotFoundException;
import dev.vigilo.exec.view.RunCatalog;
import java.util.UUID;

/**
 * A run's name for page titles, which lead with it (docs/web.md, "Presentation rules"): its name (the profile's name, and its label when it has one) as
 * preparation recorded it, else {@code run 1a2b3c4d} (a run created before names were recorded, or one not found:
 * the page itself says that, with its own status).
 */
final class RunNames {
    private final RunCatalog catalog;

    RunNames(RunCatalog catalog) {
        this.catalog = catalog;
    }

    String of(UUID run) {
        try {
            return catalog.identity(run)
                    .runIdentity()
                    .map(RunCatalog.Identity::name)
                    .filter(n -> !n.isBlank())
                    .orElseGet(() -> shortId(run));
        } catch (NotFoundException e) {
            return shortId(run);
        }
    }

    private static String shortId(UUID run) {
        return "run " + run.toString().substring(0, 8);
    }
}
