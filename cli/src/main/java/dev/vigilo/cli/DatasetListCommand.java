package dev.vigilo.cli;

import dev.vigilo.common.input.Names;
import dev.vigilo.dataset.DatasetCatalog;
import dev.vigilo.dataset.DatasetEntry;
import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code vigilo dataset list}. */
@Command(name = "list", mixinStandardHelpOptions = true, description = "List finalized datasets, newest first.")
final class DatasetListCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    JsonOption json;

    @Override
    public Integer call() {
        try (Connections connections = CommandSupport.root(spec).connections()) {
            List<DatasetEntry> entries =
                    new DatasetCatalog(connections.control().jdbi()).list();
            PrintWriter out = CommandSupport.out(spec);
            if (json.requested()) {
                json.print(entries.stream().map(Json::dataset).toList());
            } else if (entries.isEmpty()) {
                out.println("No datasets yet. Upload one with `vigilo dataset upload FILE`.");
            } else {
                out.printf("%-36s  %10s  %-20s  %s%n", "UPLOAD ID", "CASES", "CREATED", "NAME");
                for (DatasetEntry e : entries) {
                    out.printf(
                            "%-36s  %10d  %-20s  %s%n",
                            e.uploadId(),
                            e.caseCount(),
                            e.createdAt().toString().substring(0, 19).replace('T', ' '),
                            Names.printable(e.name()));
                }
            }
        }
        return ExitCode.OK;
    }
}
