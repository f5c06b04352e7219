package dev.vigilo.cli;

import picocli.CommandLine;

/** Reads the version from the jar manifest; a build from the source tree without a jar reports "development". */
final class VersionProvider implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
        String version = Cli.class.getPackage().getImplementationVersion();
        return new String[] {
            "vigilo " + (version == null ? "development build" : version),
            "Java " + System.getProperty("java.version") + " (" + System.getProperty("java.vendor") + ")"
        };
    }
}
