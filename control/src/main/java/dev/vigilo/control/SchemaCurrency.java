package dev.vigilo.control;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.JarURLConnection;
import java.net.URISyntaxException;
import java.net.URL;
import java.net.URLConnection;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Enumeration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.CRC32;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether a schema already holds exactly the migrations on the class path, so that Flyway need not be started: its
 * {@code migrate} on an up-to-date schema costs a command a few hundred ms of CPU (configuration, class-path scan,
 * validation; docs/benchmarks.md, "Fixed cost of an evaluation"), and every command opens the control database and
 * the execution schema.
 *
 * <p>Current means: every versioned SQL migration found at the locations is in the schema history, applied
 * successfully with the checksum Flyway computes for the file (CRC32 over the UTF-8 bytes of its lines, without line
 * breaks and a leading byte-order mark), and the history holds nothing else (no failed, newer, unknown or other kind
 * of row). Anything else, or anything this check cannot read (no history table yet, a location that is neither a
 * directory nor a jar, a file that is not a {@code V<n>__<what>.sql}), is "not known current": Flyway then runs as
 * before, migrating what is behind, validating, and refusing what it refused (for example a changed migration).
 */
final class SchemaCurrency {
    private static final Logger LOG = LoggerFactory.getLogger(SchemaCurrency.class);
    private static final Pattern VERSIONED = Pattern.compile("V([0-9]+(?:[._][0-9]+)*)__[^/]*\\.sql");

    /**
     * A system property that, set to {@code true}, starts Flyway on every open as before this check (for measuring
     * what the check saves: docs/configuration.md).
     */
    static final String ALWAYS_FLYWAY = "vigilo.migrations.alwaysFlyway";

    private SchemaCurrency() {}

    /**
     * @param historyTable the schema history table, qualified when not in the connection's schema (e.g. {@code
     *                     "execution".flyway_schema_history})
     * @param locations    Flyway locations, {@code classpath:PATH} only
     * @return true when Flyway's migrate would find nothing to do and nothing to refuse
     */
    static boolean current(DataSource dataSource, String historyTable, List<String> locations, ClassLoader loader) {
        if (Boolean.getBoolean(ALWAYS_FLYWAY)) {
            return false;
        }
        Optional<Map<String, Integer>> files = classPathMigrations(locations, loader);
        if (files.isEmpty() || files.get().isEmpty()) {
            return false;
        }
        Map<String, Integer> applied = new HashMap<>();
        try (Connection c = dataSource.getConnection();
                Statement s = c.createStatement()) {
            try (ResultSet exists = s.executeQuery("SELECT to_regclass('" + historyTable.replace("'", "''") + "')")) {
                if (!exists.next() || exists.getString(1) == null) {
                    return false; // a new database: Flyway creates the history
                }
            }
            try (ResultSet r = s.executeQuery("SELECT version, checksum, success, type FROM " + historyTable)) {
                while (r.next()) {
                    String type = r.getString(4);
                    if ("SCHEMA".equals(type)) {
                        continue; // the row Flyway writes when it created the schema
                    }
                    int checksum = r.getInt(2);
                    if (!"SQL".equals(type) || !r.getBoolean(3) || r.wasNull() || r.getString(1) == null) {
                        return false;
                    }
                    if (applied.put(r.getString(1), checksum) != null) {
                        return false;
                    }
                }
            }
        } catch (SQLException e) {
            LOG.debug("cannot read the schema history {}; migrating: {}", historyTable, e.getMessage());
            return false;
        }
        return applied.equals(files.get());
    }

    /** Version -> checksum of the versioned migrations at {@code locations}; empty when they cannot all be read. */
    static Optional<Map<String, Integer>> classPathMigrations(List<String> locations, ClassLoader loader) {
        Map<String, Integer> found = new HashMap<>();
        try {
            for (String location : locations) {
                if (!location.startsWith("classpath:")) {
                    return Optional.empty();
                }
                String path = location.substring("classpath:".length()).replaceAll("^/+|/+$", "");
                Enumeration<URL> roots = loader.getResources(path);
                while (roots.hasMoreElements()) {
                    URL root = roots.nextElement();
                    if (!read(root, path, found)) {
                        return Optional.empty();
                    }
                }
            }
        } catch (IOException | URISyntaxException | RuntimeException e) {
            LOG.debug("cannot list the migrations on the class path; migrating: {}", e.getMessage());
            return Optional.empty();
        }
        return Optional.of(found);
    }

    private static boolean read(URL root, String path, Map<String, Integer> found)
            throws IOException, URISyntaxException {
        if (root.getProtocol().equals("file")) {
            try (DirectoryStream<Path> entries = Files.newDirectoryStream(Path.of(root.toURI()))) {
                for (Path p : entries) {
                    if (Files.isDirectory(p)) {
                        return false; // Flyway scans subdirectories too: leave such a layout to it
                    }
                    try (InputStream in = Files.newInputStream(p)) {
                        if (!add(p.getFileName().toString(), in, found)) {
                            return false;
                        }
                    }
                }
            }
            return true;
        }
        if (root.getProtocol().equals("jar")) {
            URLConnection connection = root.openConnection();
            if (!(connection instanceof JarURLConnection jar)) {
                return false;
            }
            connection.setUseCaches(false);
            try (JarFile file = new JarFile(Path.of(jar.getJarFileURL().toURI()).toFile())) {
                String prefix = path + "/";
                Enumeration<JarEntry> entries = file.entries();
                while (entries.hasMoreElements()) {
                    JarEntry e = entries.nextElement();
                    if (!e.getName().startsWith(prefix) || e.getName().equals(prefix)) {
                        continue;
                    }
                    String name = e.getName().substring(prefix.length());
                    if (e.isDirectory() || name.contains("/")) {
                        return false;
                    }
                    try (InputStream in = file.getInputStream(e)) {
                        if (!add(name, in, found)) {
                            return false;
                        }
                    }
                }
            }
            return true;
        }
        return false;
    }

    private static boolean add(String name, InputStream in, Map<String, Integer> found) throws IOException {
        Matcher m = VERSIONED.matcher(name);
        if (!m.matches()) {
            return false;
        }
        String version = m.group(1).replace('_', '.');
        return found.put(version, checksum(in)) == null;
    }

    /** Flyway's checksum of a migration: CRC32 over each line's UTF-8 bytes, line breaks and a leading BOM left out. */
    static int checksum(InputStream in) throws IOException {
        CRC32 crc = new CRC32();
        BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8), 4096);
        String line = reader.readLine();
        if (line != null) {
            if (!line.isEmpty() && line.charAt(0) == '\uFEFF') {
                line = line.substring(1);
            }
            do {
                crc.update(line.getBytes(StandardCharsets.UTF_8));
            } while ((line = reader.readLine()) != null);
        }
        return (int) crc.getValue();
    }
}
