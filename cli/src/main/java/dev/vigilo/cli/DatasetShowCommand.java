package dev.vigilo.cli;

import dev.vigilo.common.input.Names;
import dev.vigilo.dataset.DatasetCatalog;
import dev.vigilo.dataset.DatasetEntry;
import dev.vigilo.dataset.DatasetOrigin;
import java.io.PrintWriter;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code vigilo dataset show ID}. */
@Command(name = "show", mixinStandardHelpOptions = true, description = "Show one finalized dataset's catalog entry.")
final class DatasetShowCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    IdParameters.Upload uploadId;

    @Mixin
    JsonOption json;

    @Override
    public Integer call() {
        try (Connections connections = CommandSupport.root(spec).connections()) {
            DatasetCatalog catalog = new DatasetCatalog(connections.control().jdbi());
            DatasetEntry e = catalog.get(uploadId.id());
            Optional<DatasetOrigin> origin = catalog.origin(e.uploadId());
            PrintWriter out = CommandSupport.out(spec);
            if (json.requested()) {
                Map<String, Object> m = Json.dataset(e);
                origin.ifPresent(o -> m.put("origin", Json.origin(o)));
                json.print(m);
            } else {
                out.printf("upload id:        %s%n", e.uploadId());
                out.printf("name:             %s%n", Names.printable(e.name()));
                out.printf("cases:            %d%n", e.caseCount());
                out.printf("source hash:      %s (%d bytes)%n", e.sourceSha256(), e.sourceBytes());
                out.printf("membership uuid:  %s%n", e.membershipUuid());
                out.printf("storage:          %s%n", e.storage());
                out.printf(
                        "index root:       %s (%d bytes, %d levels)%n",
                        e.indexRoot().key(), e.indexRoot().length(), e.indexLevels());
                out.printf("created:          %s%n", e.createdAt());
                origin.ifPresent(o -> out.printf(
                        "made from:        datagen experiment %s of pipeline %s (%s, log version %d, %d items, map"
                                + " %s)%n",
                        Names.printable(o.experiment()),
                        Names.printable(o.pipeline()),
                        o.durableRoot(),
                        o.logVersion(),
                        o.items(),
                        o.map()));
            }
        }
        return ExitCode.OK;
    }
}
